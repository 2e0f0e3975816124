package config

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// LevelTrace is the slog level of hclog's Trace, below slog.LevelDebug:
// SlogLogger logs hclog's Trace lines at it, and SlogHandler logs a record
// at it or below as hclog's Trace.
const LevelTrace = slog.LevelDebug - 4

// LoggerKey is the attribute key under which SlogLogger records the name
// an hclog.Logger was given with Named (dotted, "kernel.sidecar"), and
// under which SlogHandler finds one to pass to hclog's Named.
const LoggerKey = "logger"

// SlogLogger returns an hclog.Logger that writes to l, for Config.Logger
// (or anywhere else an hclog.Logger is taken) in a host that logs with
// log/slog.
//
// Levels map one to one (Trace to LevelTrace, Debug, Info, Warn and Error
// to slog's own); whether a line is logged is decided by l's handler
// (Handler.Enabled), and by SetLevel when one was set. hclog's key/value
// pairs become attributes, as slog.Logger.Log takes them; With adds
// attributes to every line; Named and ResetNamed set the LoggerKey
// attribute. Each line's source is the caller of the hclog method. A nil
// l means slog.Default(). The Logger is safe for concurrent use.
func SlogLogger(l *slog.Logger) hclog.Logger {
	if l == nil {
		l = slog.Default()
	}
	return &slogLogger{l: l, level: new(atomic.Int32)}
}

// slogLogger is the hclog.Logger SlogLogger returns.
type slogLogger struct {
	l       *slog.Logger
	name    string
	implied []any
	// level is the level SetLevel set, shared by the loggers With and
	// Named derive (as hclog's own share theirs); hclog.NoLevel leaves the
	// decision to the handler.
	level *atomic.Int32
}

func (s *slogLogger) Log(level hclog.Level, msg string, args ...any) { s.log(level, msg, args) }
func (s *slogLogger) Trace(msg string, args ...any)                  { s.log(hclog.Trace, msg, args) }
func (s *slogLogger) Debug(msg string, args ...any)                  { s.log(hclog.Debug, msg, args) }
func (s *slogLogger) Info(msg string, args ...any)                   { s.log(hclog.Info, msg, args) }
func (s *slogLogger) Warn(msg string, args ...any)                   { s.log(hclog.Warn, msg, args) }
func (s *slogLogger) Error(msg string, args ...any)                  { s.log(hclog.Error, msg, args) }

// log writes one line; each exported method calls it directly, so the
// caller of that method is three frames up.
func (s *slogLogger) log(level hclog.Level, msg string, args []any) {
	if !s.enabled(level) {
		return
	}
	var pcs [1]uintptr
	runtime.Callers(3, pcs[:])
	r := slog.NewRecord(time.Now(), slogLevel(level), msg, pcs[0])
	if s.name != "" {
		r.AddAttrs(slog.String(LoggerKey, s.name))
	}
	r.Add(hclogArgs(args)...)
	_ = s.l.Handler().Handle(context.Background(), r)
}

// enabled says whether a line at level is logged.
func (s *slogLogger) enabled(level hclog.Level) bool {
	if level == hclog.Off {
		return false
	}
	if set := hclog.Level(s.level.Load()); set != hclog.NoLevel && level < set {
		return false
	}
	return s.l.Handler().Enabled(context.Background(), slogLevel(level))
}

func (s *slogLogger) IsTrace() bool { return s.enabled(hclog.Trace) }
func (s *slogLogger) IsDebug() bool { return s.enabled(hclog.Debug) }
func (s *slogLogger) IsInfo() bool  { return s.enabled(hclog.Info) }
func (s *slogLogger) IsWarn() bool  { return s.enabled(hclog.Warn) }
func (s *slogLogger) IsError() bool { return s.enabled(hclog.Error) }

func (s *slogLogger) ImpliedArgs() []any { return slices.Clone(s.implied) }

func (s *slogLogger) With(args ...any) hclog.Logger {
	c := *s
	c.implied = append(slices.Clip(s.implied), args...)
	c.l = s.l.With(hclogArgs(args)...)
	return &c
}

func (s *slogLogger) Name() string { return s.name }

func (s *slogLogger) Named(name string) hclog.Logger {
	if s.name != "" {
		name = s.name + "." + name
	}
	return s.ResetNamed(name)
}

func (s *slogLogger) ResetNamed(name string) hclog.Logger {
	c := *s
	c.name = name
	return &c
}

func (s *slogLogger) SetLevel(level hclog.Level) { s.level.Store(int32(level)) }

// GetLevel returns the level SetLevel set or, without one, the lowest
// level l's handler is enabled for.
func (s *slogLogger) GetLevel() hclog.Level {
	if set := hclog.Level(s.level.Load()); set != hclog.NoLevel {
		return set
	}
	for _, l := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if s.enabled(l) {
			return l
		}
	}
	return hclog.Off
}

func (s *slogLogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(s.StandardWriter(opts), "", 0)
}

// StandardWriter returns a writer logging each write as one line, at
// opts.ForceLevel when set, else Info.
func (s *slogLogger) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	level := hclog.Info
	if opts != nil && opts.ForceLevel != hclog.NoLevel {
		level = opts.ForceLevel
	}
	return stdWriter{s: s, level: level}
}

type stdWriter struct {
	s     *slogLogger
	level hclog.Level
}

func (w stdWriter) Write(p []byte) (int, error) {
	w.s.Log(w.level, string(bytes.TrimRight(p, "\r\n")))
	return len(p), nil
}

// slogLevel maps an hclog level to slog's.
func slogLevel(l hclog.Level) slog.Level {
	switch {
	case l <= hclog.Trace:
		return LevelTrace
	case l == hclog.Debug:
		return slog.LevelDebug
	case l == hclog.Info:
		return slog.LevelInfo
	case l == hclog.Warn:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// hclogLevel maps a slog level to hclog's: a level between two of slog's
// named ones is the lower one's.
func hclogLevel(l slog.Level) hclog.Level {
	switch {
	case l < slog.LevelDebug:
		return hclog.Trace
	case l < slog.LevelInfo:
		return hclog.Debug
	case l < slog.LevelWarn:
		return hclog.Info
	case l < slog.LevelError:
		return hclog.Warn
	default:
		return hclog.Error
	}
}

// hclogArgs turns hclog's key/value pairs into slog's: a key that is not
// a string is formatted with %v, a last key without a value gets the key
// hclog gives it, EXTRA_VALUE_AT_END.
func hclogArgs(args []any) []any {
	out := make([]any, 0, len(args)+1)
	for i := 0; i < len(args); i += 2 {
		if i+1 == len(args) {
			out = append(out, slog.Any("EXTRA_VALUE_AT_END", args[i]))
			break
		}
		key, ok := args[i].(string)
		if !ok {
			key = fmt.Sprint(args[i])
		}
		out = append(out, slog.Any(key, args[i+1]))
	}
	return out
}

// SlogHandler returns a slog.Handler that writes to l: a host holding an
// hclog.Logger (Config.Logger, or the logger of a plugin's log lines) can
// give a *slog.Logger built on it (slog.New(SlogHandler(l))) to code that
// takes one.
//
// Levels map one to one, a level between two of slog's named ones as the
// lower one (LevelTrace and below to Trace); Enabled asks l (IsTrace ...
// IsError). Attributes become hclog's key/value pairs, a group's keys
// prefixed with its name and a dot ("req.id"); WithAttrs calls l.With,
// and an attribute LoggerKey given to WithAttrs names the logger (l.Named)
// instead. The record's time and source are l's to add. A nil l means
// hclog.Default().
func SlogHandler(l hclog.Logger) slog.Handler {
	if l == nil {
		l = hclog.Default()
	}
	return &hclogHandler{l: l}
}

// hclogHandler is the slog.Handler SlogHandler returns.
type hclogHandler struct {
	l      hclog.Logger
	prefix string // the open groups, each name followed by a dot
}

func (h *hclogHandler) Enabled(_ context.Context, level slog.Level) bool {
	switch hclogLevel(level) {
	case hclog.Trace:
		return h.l.IsTrace()
	case hclog.Debug:
		return h.l.IsDebug()
	case hclog.Info:
		return h.l.IsInfo()
	case hclog.Warn:
		return h.l.IsWarn()
	default:
		return h.l.IsError()
	}
}

func (h *hclogHandler) Handle(_ context.Context, r slog.Record) error {
	args := make([]any, 0, 2*r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		args = appendAttr(args, h.prefix, a)
		return true
	})
	h.l.Log(hclogLevel(r.Level), r.Message, args...)
	return nil
}

func (h *hclogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	l := h.l
	var args []any
	for _, a := range attrs {
		if h.prefix == "" && a.Key == LoggerKey {
			l = l.Named(a.Value.String())
			continue
		}
		args = appendAttr(args, h.prefix, a)
	}
	if len(args) > 0 {
		l = l.With(args...)
	}
	return &hclogHandler{l: l, prefix: h.prefix}
}

func (h *hclogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &hclogHandler{l: h.l, prefix: h.prefix + name + "."}
}

// appendAttr appends a as hclog key/value pairs, a group's members with
// their keys prefixed; an empty attribute is dropped, as slog's handlers
// drop it.
func appendAttr(args []any, prefix string, a slog.Attr) []any {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return args
	}
	if a.Value.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, m := range a.Value.Group() {
			args = appendAttr(args, prefix, m)
		}
		return args
	}
	return append(args, prefix+a.Key, a.Value.Any())
}
