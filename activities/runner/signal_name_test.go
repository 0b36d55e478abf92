package runner

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSignalName pins the names receipts and progress snapshots carry: the
// ones the runner sends and the ones a crashing CLI dies of keep the exact
// words of the hand-written table they replace, a number the system does
// not name is SIG<n>, and a signal that is not a syscall.Signal counts as
// the runner's cancellation.
func TestSignalName(t *testing.T) {
	t.Parallel()
	for sig, want := range map[os.Signal]string{
		syscall.SIGINT:      "SIGINT",
		syscall.SIGTERM:     "SIGTERM",
		syscall.SIGKILL:     "SIGKILL",
		syscall.SIGHUP:      "SIGHUP",
		syscall.SIGQUIT:     "SIGQUIT",
		syscall.SIGABRT:     "SIGABRT",
		syscall.SIGSEGV:     "SIGSEGV",
		syscall.SIGPIPE:     "SIGPIPE",
		syscall.SIGBUS:      "SIGBUS",
		syscall.SIGUSR1:     "SIGUSR1",
		syscall.SIGUSR2:     "SIGUSR2",
		syscall.SIGALRM:     "SIGALRM",
		syscall.Signal(200): "SIG200",
		os.Interrupt:        "SIGINT",
		otherSignal{}:       "SIGTERM",
	} {
		require.Equal(t, want, signalName(sig), "%v", sig)
	}
}

// otherSignal is an os.Signal that is not a syscall.Signal.
type otherSignal struct{}

func (otherSignal) String() string { return "other" }
func (otherSignal) Signal()        {}
