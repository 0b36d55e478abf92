package main

import "github.com/spf13/cobra"

// addQueryEngineFlags declares --nats and --data-dir only, for the
// commands that read the store and change nothing in it (status, history,
// replay, report, prune): --fsync and --replicas only matter to a command
// that starts a server or creates streams for a deployment, so these
// commands neither show nor accept them. An embedded server such a command
// starts for its own read uses the defaults.
func addQueryEngineFlags(c *cobra.Command, f *engineFlags) {
	f.cmd = c
	fl := c.Flags()
	fl.StringVar(&f.nats, "nats", "", "comma-separated NATS URLs of an existing server or cluster (nats://a:4222,tls://b:4222;\ndefault $NATS_URL); without it the data directory's serve (or embedded server) is used")
	fl.StringVar(&f.dataDir, "data-dir", "", dataDirHelp)
	addNATSFlags(c, &f.natsAuth)
}
