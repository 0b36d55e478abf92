package activities

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// runnerArgs is the `switchyard runner` command line (without the command
// name) for job. Values use the --flag=value form, so a value that starts
// with "--" is never read as a missing value. --api-spend is omitted for an
// unset or legacy spend, --timeout when the job has none.
func runnerArgs(j events.Job) []string {
	args := []string{
		"--parent=" + string(j.Parent),
		"--provider=" + string(j.Provider),
		"--model=" + j.Model,
		"--effort=" + string(j.Effort),
		"--mode=" + string(j.Mode),
		"--prompt=" + j.Paths.Prompt,
		"--cwd=" + j.Paths.Cwd,
		"--output=" + j.Paths.Output,
		"--receipt=" + j.Paths.Receipt,
		"--progress=" + j.Paths.Progress,
		"--execution-id=" + j.ExecutionID,
	}
	switch j.APISpend {
	case policy.APISpendDeny, policy.APISpendApproved:
		args = append(args, "--api-spend="+string(j.APISpend))
	}
	if j.Contract != "" {
		args = append(args, "--contract="+string(j.Contract))
	}
	if j.TimeoutMs > 0 {
		args = append(args, "--timeout="+strconv.FormatFloat(float64(j.TimeoutMs)/1000, 'f', -1, 64))
	}
	return args
}

// maxReceiptRead bounds the receipt bytes a worker digests. The engine
// refuses receipts over policy.MaxReceiptBytes anyway; a larger file is
// reported as no receipt.
const maxReceiptRead = 4 * policy.MaxReceiptBytes

// receiptDigest is events.Digest of the receipt file's bytes, read without
// following a symlink.
func receiptDigest(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxReceiptRead+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxReceiptRead {
		return "", fmt.Errorf("receipt %s is over %d bytes", path, maxReceiptRead)
	}
	if len(b) == 0 {
		return "", errors.New("receipt " + path + " is empty")
	}
	return events.Digest(b), nil
}

// cappedBuffer keeps the first max bytes written to it, for logs.
type cappedBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.b)
}
