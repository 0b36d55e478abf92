package activities

import (
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// runnerOptions is the runner attempt for job. An unset or legacy spend
// stays legacy; a job without a timeout has no deadline. Every engine job
// is watched for stalls unless its run turned the watchdog off
// (StallWatchdogOff): its StallTimeoutMs, 0 meaning the contract's
// default; a negative or overflowing value is refused.
func runnerOptions(j events.Job) (runner.Options, error) {
	stallMs, err := runner.ResolveStallTimeoutMS(j.StallTimeoutMs)
	if err != nil {
		return runner.Options{}, fmt.Errorf("job %s: %w", j.ExecutionID, err)
	}
	if j.StallWatchdogOff {
		stallMs = 0 // runner.Options: 0 arms no watchdog
	}
	o := runner.Options{
		Parent:      j.Parent,
		Provider:    j.Provider,
		Model:       j.Model,
		Effort:      j.Effort,
		Mode:        j.Mode,
		Prompt:      j.Paths.Prompt,
		Cwd:         j.Paths.Cwd,
		Output:      j.Paths.Output,
		Receipt:     j.Paths.Receipt,
		Progress:    j.Paths.Progress,
		ExecutionID: j.ExecutionID,
		Contract:    j.Contract,
		// The job's effective stall timeout (0 on the wire is the default).
		StallTimeout: time.Duration(stallMs) * time.Millisecond,

		AllowUnverifiedContainment:  j.AllowUnverifiedContainment,
		OpenCodeChatGPTSubscription: j.OpenCodeChatGPTSubscription,
	}
	switch j.APISpend {
	case policy.APISpendDeny, policy.APISpendApproved:
		o.APISpend = j.APISpend
	}
	if j.TimeoutMs > 0 {
		o.Timeout = time.Duration(j.TimeoutMs) * time.Millisecond
	}
	return o, nil
}

// maxReceiptRead bounds the receipt bytes a worker digests. The engine
// refuses receipts over policy.MaxReceiptBytes anyway; a larger receipt is
// reported as no receipt.
const maxReceiptRead = 4 * policy.MaxReceiptBytes

// receiptDigest is events.Digest of the receipt bytes the runner wrote to
// path; a receipt that did not reach its file is no receipt.
func receiptDigest(path string, res runner.Result) (string, error) {
	switch {
	case !res.Written:
		return "", fmt.Errorf("receipt %s was not written", path)
	case len(res.Bytes) > maxReceiptRead:
		return "", fmt.Errorf("receipt %s is over %d bytes", path, maxReceiptRead)
	case len(res.Bytes) == 0:
		return "", errors.New("receipt " + path + " is empty")
	}
	return events.Digest(res.Bytes), nil
}
