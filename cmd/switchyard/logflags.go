package main

import (
	"io"
	"log/slog"

	"github.com/spf13/cobra"
)

// logFlags are --log-format and --log-level, on the commands that log
// (serve, worker, run).
type logFlags struct {
	format string
	level  string
}

// addLogFlags declares --log-format (default text) and --log-level
// (default level).
func addLogFlags(c *cobra.Command, lf *logFlags, level string) {
	c.Flags().StringVar(&lf.format, "log-format", "text", "log format on stderr: text (key=value lines) or json (one object per line)")
	c.Flags().StringVar(&lf.level, "log-level", level, "least severe log level printed: debug, info, warn or error")
}

// validate checks both values before anything starts.
func (lf logFlags) validate() error {
	switch lf.format {
	case "text", "json":
	default:
		return usagef("--log-format %q: want text or json", lf.format)
	}
	if _, err := lf.slogLevel(); err != nil {
		return err
	}
	return nil
}

func (lf logFlags) slogLevel() (slog.Level, error) {
	switch lf.level {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, usagef("--log-level %q: want debug, info, warn or error", lf.level)
}

// logger is the command's logger on w, as the flags say (validate first).
func (lf logFlags) logger(w io.Writer) *slog.Logger {
	lvl, _ := lf.slogLevel()
	o := &slog.HandlerOptions{Level: lvl}
	if lf.format == "json" {
		return slog.New(slog.NewJSONHandler(w, o))
	}
	return slog.New(slog.NewTextHandler(w, o))
}
