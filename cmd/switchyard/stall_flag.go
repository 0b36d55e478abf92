package main

import "time"

// stallTimeoutValue is run's --stall-timeout: a duration, or "off", which
// turns the run's stall watchdog off (recorded in the run). It reads and
// reports like a duration flag otherwise, so its errors and help keep the
// duration form.
type stallTimeoutValue struct {
	d   *time.Duration
	off *bool
}

func (v stallTimeoutValue) String() string {
	if v.off != nil && *v.off {
		return "off"
	}
	if v.d == nil || *v.d == 0 {
		return "" // unset: help shows the default in the usage text
	}
	return v.d.String()
}

func (v stallTimeoutValue) Set(s string) error {
	if s == "off" {
		*v.off, *v.d = true, 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.off, *v.d = false, d
	return nil
}

func (stallTimeoutValue) Type() string { return "duration" }
