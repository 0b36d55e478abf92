package engineconn

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/events"
)

// TestPublishContainment: the holder's self-test is added to the
// serve.json it wrote, the rest unchanged, and a publication after Close
// writes nothing (serve.json stays removed).
func TestPublishContainment(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Open(ctx, Options{DataDir: dir, ServeKind: "serve", Listen: "127.0.0.1:0", Exclusive: true, Role: events.RoleEngine})
	require.NoError(t, err)
	before, err := ReadServeInfo(dir)
	require.NoError(t, err)
	require.Nil(t, before.Containment, "not published before the self-test")

	rep := sandbox.Unverified(7, "test: no self-test", "none")
	require.NoError(t, c.PublishContainment(rep))
	after, err := ReadServeInfo(dir)
	require.NoError(t, err)
	require.Equal(t, &rep, after.Containment)
	after.Containment = nil
	require.Equal(t, before, after, "only the self-test is added")

	c.Close()
	require.NoError(t, c.PublishContainment(rep))
	_, err = ReadServeInfo(dir)
	require.True(t, errors.Is(err, fs.ErrNotExist), "serve.json after Close: %v", err)
}

// TestServeRemovesServeInfoTemps: a temporary file of serve.json that a
// holder killed mid-write left behind is removed by the next holder, which
// writes serve.json whole.
func TestServeRemovesServeInfoTemps(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	stale := filepath.Join(dir, ".serve-4242.json")
	require.NoError(t, os.WriteFile(stale, []byte(`{"pid":`), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Open(ctx, Options{DataDir: dir, ServeKind: "serve", Listen: "127.0.0.1:0", Exclusive: true, Role: events.RoleEngine})
	require.NoError(t, err)
	defer c.Close()
	_, err = os.Stat(stale)
	require.True(t, errors.Is(err, fs.ErrNotExist), "the stale temporary file: %v", err)
	_, err = ReadServeInfo(dir)
	require.NoError(t, err)
}
