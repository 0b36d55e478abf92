package activities

import "github.com/switchyard-dev/switchyard/policy"

// Observer is told of a worker's failures that an operator alerts on;
// events/metrics.Metrics implements it.
type Observer interface {
	// ClaimFailed: a job of provider could not be claimed (the claim store
	// failed or refused the execution); the job was returned or removed.
	ClaimFailed(provider policy.Provider)
	// LeaseFailed: a running attempt's lease renewal failed or was refused
	// (the lease may be lost).
	LeaseFailed(provider policy.Provider)
}

// observe calls f with the configured Observer, if any.
func (w *Worker) observe(f func(Observer)) {
	if w.cfg.Observer != nil {
		f(w.cfg.Observer)
	}
}
