package main

import (
	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/events"
)

// engineFlags are the options every engine command shares: where the
// events live (--nats, or the data directory's own server) and how an
// embedded server is started.
type engineFlags struct {
	nats     string
	dataDir  string
	replicas int
	fsync    string
	// natsAuth: credentials and TLS for --nats (natsflags.go).
	natsAuth natsFlags
	// cmd is the command the flags belong to; its name decides the role
	// the command connects as (commandRole).
	cmd *cobra.Command
}

// fsyncHelp is --fsync's help: the durability trade must be stated where
// the option is chosen.
const fsyncHelp = `when an embedded server fsyncs: "always" fsyncs every write before
acknowledging it; "interval" fsyncs once a second, trading durability for
throughput: acknowledged events can be lost on an OS crash or power loss
(a process crash loses nothing)`

// addEngineFlags declares --nats, --data-dir, --replicas and, when embed is
// true (the command may start the data directory's embedded server),
// --fsync.
func addEngineFlags(c *cobra.Command, f *engineFlags, embed bool) {
	f.cmd = c
	fl := c.Flags()
	fl.StringVar(&f.nats, "nats", "", "comma-separated NATS URLs of an existing server or cluster (nats://a:4222,tls://b:4222;\ndefault $NATS_URL); without it the data directory's serve (or embedded server) is used")
	fl.StringVar(&f.dataDir, "data-dir", "", dataDirHelp)
	fl.IntVar(&f.replicas, "replicas", 0, "stream replicas with --nats: 3 for a three-node cluster. Without it, streams that exist keep\ntheirs and new ones get 3 when --nats lists three or more servers, else 1; with it, existing\nstreams are changed to it")
	if embed {
		fl.StringVar(&f.fsync, "fsync", string(events.FsyncAlways), fsyncHelp)
	}
	addNATSFlags(c, &f.natsAuth)
}

// validate checks the flags' own values, before anything connects.
func (f *engineFlags) validate(c *cobra.Command) error {
	if err := f.natsAuth.resolve(c, &f.nats); err != nil {
		return err
	}
	if c.Flags().Changed("nats") && len(events.SplitURLs(f.nats)) == 0 {
		return usagef("--nats %q lists no URL; pass nats://host:port[,nats://host:port...]", f.nats)
	}
	if f.replicas < 0 || f.replicas > 5 {
		return usagef("--replicas %d is out of range; use 1 (single server) to 5, typically 3 for a cluster", f.replicas)
	}
	if f.replicas != 0 && f.nats == "" {
		return usagef("--replicas applies only with --nats (an embedded server always has one replica); drop it or add --nats URL")
	}
	if f.nats != "" && c.Flags().Changed("fsync") {
		return usagef("--fsync applies to an embedded server; with --nats the servers' own configuration decides, so drop --fsync")
	}
	switch events.FsyncPolicy(f.fsync) {
	case "", events.FsyncAlways, events.FsyncInterval:
	default:
		return usagef("--fsync %q: want always or interval", f.fsync)
	}
	return nil
}
