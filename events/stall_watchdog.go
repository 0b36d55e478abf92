package events

// StallWatchdog is whether a run's attempts are watched for stalls
// (RunOptions.StallWatchdog): the execution-runtime contract's response
// stall watchdog, which ends an attempt whose stream shows no progress
// for its stall timeout as timed-out with a response_stalled error.
type StallWatchdog string

// Stall watchdog settings.
const (
	// StallWatchdogOn: every attempt is watched (the default; Submit
	// records it explicitly).
	StallWatchdogOn StallWatchdog = "on"
	// StallWatchdogOff: run --stall-timeout off; no attempt is stopped
	// for silence, only by an explicit --timeout, a cancel or its end.
	StallWatchdogOff StallWatchdog = "off"
	// StallWatchdogLegacy is a run recorded before the setting existed:
	// its attempts were watched, as under StallWatchdogOn.
	StallWatchdogLegacy StallWatchdog = ""
)

// Watched reports whether attempts are watched for stalls under w.
func (w StallWatchdog) Watched() bool { return w != StallWatchdogOff }

// validateStallWatchdog checks the setting, and that a run without a
// watchdog sets no stall timeout.
func validateStallWatchdog(o RunOptions) error {
	switch o.StallWatchdog {
	case StallWatchdogOn, StallWatchdogLegacy:
		return nil
	case StallWatchdogOff:
		if o.StallTimeoutMs != 0 || len(o.ProviderStallTimeoutMs) > 0 {
			return invalidf("options.stallWatchdog off with a stall timeout set: a run without the watchdog has none")
		}
		return nil
	}
	return invalidf("options.stallWatchdog %q: want on or off", o.StallWatchdog)
}
