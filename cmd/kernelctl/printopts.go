package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// Defaults of run's printer bounds (docs/cli.md, "What run prints").
const (
	// defaultPrintQueue and defaultPrintQueueBytes bound the events run
	// holds for a stdout that is not read; notifies get half of each.
	defaultPrintQueue      = 1024
	defaultPrintQueueBytes = 1 << 20
	// defaultNotifyRate is how many notify lines of one plugin run shows
	// a second, in bursts of as many.
	defaultNotifyRate = 10
)

// printerOptions are the bounds of run's printer, from its flags.
type printerOptions struct {
	// queue and queueBytes bound the events and text queued for stdout
	// (observe.Queue's MaxEvents and MaxBytes).
	queue      int
	queueBytes byteSize
	// notifyRate is how many notify lines a second each plugin gets; zero
	// shows none (they are counted).
	notifyRate int
}

// defaultPrinterOptions are the bounds without flags.
func defaultPrinterOptions() printerOptions {
	return printerOptions{queue: defaultPrintQueue, queueBytes: defaultPrintQueueBytes, notifyRate: defaultNotifyRate}
}

// addFlags registers the printer's flags on cmd, with their defaults.
func (o *printerOptions) addFlags(cmd *cobra.Command) {
	*o = defaultPrinterOptions()
	fs := cmd.Flags()
	fs.IntVar(&o.queue, "print-queue", o.queue,
		"events held for a stdout that is not read, at most (notifies get half); more are dropped and counted")
	fs.Var(&o.queueBytes, "print-queue-bytes",
		"bytes of events held for a stdout that is not read, at most (notifies get half), e.g. 512KiB or 4MiB")
	fs.IntVar(&o.notifyRate, "notify-rate", o.notifyRate,
		"notify lines shown per plugin and second (0: none); the others are counted in a periodic line")
}

// check validates the bounds.
func (o printerOptions) check() error {
	switch {
	case o.queue < 2:
		return fmt.Errorf("run: --print-queue %d: want at least 2", o.queue)
	case o.queueBytes < 4<<10:
		return fmt.Errorf("run: --print-queue-bytes %s: want at least 4KiB", o.queueBytes)
	case o.notifyRate < 0:
		return fmt.Errorf("run: --notify-rate %d: want 0 or more", o.notifyRate)
	}
	return nil
}

// byteSize is a flag's byte count: a number of bytes, or of KiB, MiB or
// GiB with that suffix (case-insensitive), as 512KiB or 4MiB.
type byteSize int64

func (b byteSize) String() string {
	switch n := int64(b); {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(int64(b), 10)
}

func (b *byteSize) Type() string { return "size" }

func (b *byteSize) Set(s string) error {
	num, unit := s, int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"b", 1}} {
		if strings.HasSuffix(strings.ToLower(s), u.suffix) {
			num, unit = s[:len(s)-len(u.suffix)], u.n
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n < 0 || n > (1<<62)/unit {
		return errors.New("not a size: want bytes, or a number with KiB, MiB or GiB")
	}
	*b = byteSize(n * unit)
	return nil
}
