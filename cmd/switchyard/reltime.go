package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// timeFormat renders the times of the human tables (status, workers,
// history, logs): relative to now ("12s ago", "in 3m") unless absolute is
// set (--absolute-times), which prints RFC 3339 in UTC instead. --json
// output never goes through it: it keeps the absolute RFC 3339 times.
// now is injected, so a table renders the same in a test at any hour.
type timeFormat struct {
	now      time.Time
	absolute bool
}

// absoluteTimesHelp is the help line of --absolute-times.
const absoluteTimesHelp = "print times as RFC 3339 UTC instead of relative to now (\"12s ago\"); --json always prints RFC 3339"

// addAbsoluteTimesFlag declares --absolute-times on a command whose text
// output shows times.
func addAbsoluteTimesFlag(c *cobra.Command, absolute *bool) {
	c.Flags().BoolVar(absolute, "absolute-times", false, absoluteTimesHelp)
}

// at renders t: "-" for the zero time, else "12s ago" / "in 3m" relative to
// f.now, or RFC 3339 UTC (to the second) when f.absolute.
func (f timeFormat) at(t time.Time) string {
	switch {
	case t.IsZero():
		return "-"
	case f.absolute:
		return t.UTC().Format(time.RFC3339)
	}
	d := f.now.Sub(t)
	if d < 0 {
		return "in " + ageUnit(-d)
	}
	return ageUnit(d) + " ago"
}

// ageUnit is d in its largest whole unit, truncated: 59s, 1m, 59m, 1h,
// 23h, 1d. Under a second is "0s".
func ageUnit(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", d/time.Second)
	case d < time.Hour:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return fmt.Sprintf("%dd", d/(24*time.Hour))
}

// span renders a duration for "took" and "up": 850ms under a second, then
// rounded to the second: 12s, 1m05s, 2h04m, 4d03h. Zero or negative is
// 0s.
func span(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d < time.Second {
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
}
