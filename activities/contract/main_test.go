package contract

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchyard-dev/switchyard/policy"
)

// envLedgerProcess makes the test binary a ledger writer process: the
// concurrency and crash tests run real processes against one ledger file.
const envLedgerProcess = "SWITCHYARD_CONTRACT_LEDGER_PROCESS"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envLedgerProcess); mode != "" {
		os.Exit(ledgerProcessMain(mode))
	}
	goleak.VerifyTestMain(m)
}

// ledgerProcessMain is one writer process. "reserve": record pending for
// the id, task, checkpoint in the environment, print the outcome.
// "reserve-and-hang": reserve, print "pending", then block until killed
// (the parent killed between pending and complete). "churn": reserve ids
// churn-0, churn-1, ... printing each once durable, until killed.
func ledgerProcessMain(mode string) int {
	ledger := os.Getenv("LEDGER")
	req := func(id, task string) RecordRequest {
		return RecordRequest{Ledger: ledger, ID: id, Task: task, Checkpoint: os.Getenv("CHECKPOINT"),
			Kind: policy.OpCommitCheckpoint, State: StatePending, Expected: []byte(`{"digest":"d","head":"h"}`), Now: time.Now()}
	}
	switch mode {
	case "reserve", "reserve-and-hang":
		_, err := Record(req(os.Getenv("ID"), os.Getenv("TASK")))
		if err != nil {
			b, _ := json.Marshal(map[string]any{"ok": false, "refused": IsLedgerRefusal(err), "error": err.Error()})
			fmt.Println(string(b))
			return 1
		}
		fmt.Println(`{"ok":true}`)
		if mode == "reserve-and-hang" {
			select {}
		}
		return 0
	case "churn":
		for i := 0; ; i++ {
			id := fmt.Sprintf("churn-%d", i)
			if _, err := Record(req(id, id)); err != nil {
				fmt.Println("error:", err)
				return 1
			}
			fmt.Println(id)
		}
	}
	return 2
}
