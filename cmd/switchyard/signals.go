package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals are the signals that stop a command: Ctrl-C and SIGTERM.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// signalCause is the cause of a command context cancelled by a signal.
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string { return c.sig.String() + " signal received" }

// laterSignalsKey carries, in a command's context, the channel on which
// the signals after the first arrive.
type laterSignalsKey struct{}

// notifySignals returns a context cancelled by the first SIGINT or
// SIGTERM, with a signalCause (context.Cause). The signals after the first
// are not lost: a command that acts on a second one (the worker: drain,
// then stop now) reads them from laterSignals(ctx). stop releases the
// signals.
func notifySignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	later := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, stopSignals...)
	go func() {
		first := true
		for {
			select {
			case s := <-ch:
				if first {
					first = false
					cancel(signalCause{s})
					continue
				}
				select {
				case later <- s:
				default: // one pending is enough
				}
			case <-done:
				return
			}
		}
	}()
	ctx = context.WithValue(ctx, laterSignalsKey{}, (<-chan os.Signal)(later))
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// stoppedBySignal returns the signal that cancelled ctx, if one did.
func stoppedBySignal(ctx context.Context) (os.Signal, bool) {
	var c signalCause
	if errors.As(context.Cause(ctx), &c) {
		return c.sig, true
	}
	return nil, false
}

// laterSignals is the channel of the signals after the first (nil, which
// never delivers, when ctx does not come from notifySignals).
func laterSignals(ctx context.Context) <-chan os.Signal {
	ch, _ := ctx.Value(laterSignalsKey{}).(<-chan os.Signal)
	return ch
}
