//go:build unix

package sidecar

// Benchmarks of streams (protocol 1.1, docs/protocol.md §5.12);
// BENCHMARKS.md ("Issue 13: streams") has the commands and the figures.
// The plugin is testdata/plugins/streamer (the Go SDK), built by TestMain.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/benchkit"
	"github.com/extkernel/extkernel/internal/wire"
)

// The stream BenchmarkStream moves: 64 MiB in chunks of 64 KiB, each a
// JSON string of 64 KiB (quotes included).
const (
	streamTotal  = 64 << 20
	streamChunk  = 64 << 10
	streamChunks = streamTotal / streamChunk
)

// streamInput asks the streamer's count provider for that stream.
var streamInput = json.RawMessage(fmt.Sprintf(`{"n":%d,"size":%d}`, streamChunks, streamChunk-2))

// BenchmarkStream streams 64 MiB in 64 KiB chunks per iteration and
// reports the throughput of the chunks' data (MB/s): client, from the Go
// SDK plugin to the host's Stream (window 16, acks as it reads; with the
// plugin's CPU time, plugin-cpu-ns/op, and the most chunks the Stream
// held, peak-chunks), and
// floor, the same frames (the same encoded bytes the SDK writes) written
// by a goroutine over a pipe and read with a FrameReader, each chunk's
// data found by its offset, nothing decoded.
func BenchmarkStream(b *testing.B) {
	b.Run("client", func(b *testing.B) {
		c := startBenchClient(b, filepath.Join(binDir, "streamer"))
		ctx := context.Background()
		b.SetBytes(streamTotal)
		b.ReportAllocs()
		report := benchkit.PluginCPU(b, c.PID())
		var peak int
		for b.Loop() {
			s, err := c.OpenStream(ctx, "count", streamInput, StreamOptions{})
			if err != nil {
				b.Fatal(err)
			}
			n, err := drainBytes(s)
			peak = max(peak, peakOf(s))
			s.Close()
			if err != nil || n != streamTotal {
				b.Fatalf("streamed %d bytes, %v; want %d", n, err, streamTotal)
			}
		}
		report()
		b.ReportMetric(float64(peak), "peak-chunks")
	})
	b.Run("floor", func(b *testing.B) {
		frames := floorFrames()
		b.SetBytes(streamTotal)
		b.ReportAllocs()
		for b.Loop() {
			if n, err := floorStream(frames); err != nil || n != streamTotal {
				b.Fatalf("floor streamed %d bytes, %v; want %d", n, err, streamTotal)
			}
		}
	})
}

// drainBytes takes every chunk of s and returns the bytes of their data.
func drainBytes(s *Stream) (int, error) {
	n := 0
	for {
		data, err := s.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n += len(data)
	}
}

// floorFrames returns the frames of the stream, as the Go SDK encodes
// them (sdk's sendChunk) for request id 2, the first after initialize.
func floorFrames() [][]byte {
	data := `"` + strings.Repeat("x", streamChunk-2) + `"`
	frames := make([][]byte, streamChunks)
	for i := range frames {
		frames[i] = []byte(`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":` + strconv.Itoa(i+1) +
			`,"data":` + data + "}}\n")
	}
	return frames
}

// floorStream writes frames over a pipe from a goroutine it waits for,
// reads them back as frames, and returns the bytes of their data.
func floorStream(frames [][]byte) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	written := make(chan error, 1)
	go func() {
		var err error
		for _, f := range frames {
			if _, err = w.Write(f); err != nil {
				break
			}
		}
		written <- errors.Join(err, w.Close())
	}()
	fr := wire.NewFrameReader(r, 0)
	n := 0
	marker := []byte(`,"data":`)
	for {
		line, err := fr.ReadFrame()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			r.Close()
			<-written
			return n, err
		}
		if i := bytes.Index(line, marker); i >= 0 && len(line) >= i+len(marker)+2 {
			n += len(line) - i - len(marker) - 2 // the data, without "}}"
		}
	}
	return n, errors.Join(<-written, r.Close())
}

// BenchmarkStreamSlowConsumer takes one 64 KiB chunk per second from a
// stream of window 4 whose producer could send thousands, and reports
// what the host holds meanwhile: the most chunks its Stream held
// (peak-chunks, at most the window) and the growth of the host's live
// heap since before the stream opened (heap-delta-bytes, measured after
// a GC at each tick), next to the window's bytes (window-bytes). Each
// iteration is one second: run it with a small count (-benchtime 5x).
func BenchmarkStreamSlowConsumer(b *testing.B) {
	const window = 4
	c := startBenchClient(b, filepath.Join(binDir, "streamer"))
	ctx := context.Background()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	input := json.RawMessage(fmt.Sprintf(`{"n":100000,"size":%d}`, streamChunk-2))
	s, err := c.OpenStream(ctx, "count", input, StreamOptions{Window: window})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var delta int64
	for b.Loop() {
		<-tick.C
		runtime.GC()
		runtime.ReadMemStats(&ms)
		delta = max(delta, int64(ms.HeapAlloc)-int64(base))
		if _, err := s.Next(); err != nil {
			b.Fatal(err)
		}
	}
	if peakOf(s) > window {
		b.Errorf("the host held %d chunks, more than the window %d", peakOf(s), window)
	}
	b.ReportMetric(float64(peakOf(s)), "peak-chunks")
	b.ReportMetric(float64(delta), "heap-delta-bytes")
	b.ReportMetric(float64(window*streamChunk), "window-bytes")
}
