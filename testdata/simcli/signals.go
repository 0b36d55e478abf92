package main

import (
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// signals turns SIGTERM and SIGINT into the exit codes a real CLI uses
// (143 and 130), logging each to signals.jsonl; while ignore is set they
// are logged and otherwise ignored.
type signals struct {
	ignore atomic.Bool
}

func watchSignals(s *simulation) *signals {
	sg := &signals{}
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for v := range ch {
			sn := v.(syscall.Signal)
			ignored := sg.ignore.Load()
			name := "SIGTERM"
			if sn == syscall.SIGINT {
				name = "SIGINT"
			}
			_ = simlog.Append(filepath.Join(s.binDir, simconfig.SignalsLog), simlog.Signal{
				Provider: s.prov.Name, Pid: os.Getpid(), Signal: name, Ignored: ignored, At: time.Now().UTC(),
			})
			if !ignored {
				os.Exit(128 + int(sn))
			}
		}
	}()
	return sg
}
