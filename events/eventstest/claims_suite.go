package eventstest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// RunClaimsConformance checks the Claims contract on fresh claim stores
// from newClaims. Stores may share a backend: every subtest uses its own
// execution ids.
func RunClaimsConformance(t *testing.T, newClaims func(t *testing.T) events.Claims) {
	const ttl = 15 * time.Second

	t.Run("claims are create-only", func(t *testing.T) {
		t.Parallel()
		c, x := newClaims(t), NewExecutionID()
		l, err := c.Claim(testCtx(t), x, "w1", ttl)
		require.NoError(t, err)
		require.Equal(t, events.Lease{ExecutionID: x, WorkerID: "w1", State: events.LeaseHeld, TTL: ttl, Revision: l.Revision}, l)
		require.NotZero(t, l.Revision)
		for _, w := range []string{"w2", "w1"} {
			_, err = c.Claim(testCtx(t), x, w, ttl)
			require.ErrorIs(t, err, events.ErrClaimed, "claim again by %s", w)
		}
	})

	t.Run("inspect shows holder, revision and renewal time", func(t *testing.T) {
		t.Parallel()
		c, x := newClaims(t), NewExecutionID()
		_, err := c.Inspect(testCtx(t), x)
		require.ErrorIs(t, err, events.ErrNotFound)
		l, err := c.Claim(testCtx(t), x, "w1", ttl)
		require.NoError(t, err)
		got, err := c.Inspect(testCtx(t), x)
		require.NoError(t, err)
		require.False(t, got.RenewedAt.IsZero())
		require.WithinDuration(t, time.Now(), got.RenewedAt, time.Minute)
		got.RenewedAt = time.Time{}
		require.Equal(t, l, got)
	})

	t.Run("renew moves the revision; a stale lease is lost", func(t *testing.T) {
		t.Parallel()
		c, x := newClaims(t), NewExecutionID()
		l0, err := c.Claim(testCtx(t), x, "w1", ttl)
		require.NoError(t, err)
		l1, err := c.Renew(testCtx(t), l0)
		require.NoError(t, err)
		require.Greater(t, l1.Revision, l0.Revision)
		require.EqualValues(t, 1, l1.Renewals)
		_, err = c.Renew(testCtx(t), l0)
		require.ErrorIs(t, err, events.ErrLeaseLost)
		got, err := c.Inspect(testCtx(t), x)
		require.NoError(t, err)
		require.Equal(t, l1.Revision, got.Revision)
		require.EqualValues(t, 1, got.Renewals)
	})

	t.Run("a released claim stays claimed", func(t *testing.T) {
		t.Parallel()
		c, x := newClaims(t), NewExecutionID()
		l, err := c.Claim(testCtx(t), x, "w1", ttl)
		require.NoError(t, err)
		r, err := c.Release(testCtx(t), l)
		require.NoError(t, err)
		require.Equal(t, events.LeaseReleased, r.State)
		_, err = c.Claim(testCtx(t), x, "w2", ttl)
		require.ErrorIs(t, err, events.ErrClaimed)
		_, err = c.Renew(testCtx(t), r)
		require.ErrorIs(t, err, events.ErrLeaseLost, "a released lease cannot be renewed")
		got, err := c.Inspect(testCtx(t), x)
		require.NoError(t, err)
		require.Equal(t, events.LeaseReleased, got.State)
	})

	t.Run("exactly one of racing abandoners wins and the holder loses", func(t *testing.T) {
		t.Parallel()
		c, x := newClaims(t), NewExecutionID()
		held, err := c.Claim(testCtx(t), x, "w1", ttl)
		require.NoError(t, err)
		seen, err := c.Inspect(testCtx(t), x)
		require.NoError(t, err)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = c.Abandon(context.Background(), seen, "w"+string(rune('2'+i)))
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
			} else {
				require.ErrorIs(t, err, events.ErrLeaseLost)
			}
		}
		require.Equal(t, 1, wins)
		_, err = c.Renew(testCtx(t), held)
		require.ErrorIs(t, err, events.ErrLeaseLost, "the old holder learns it lost the lease")
		got, err := c.Inspect(testCtx(t), x)
		require.NoError(t, err)
		require.Equal(t, events.LeaseAbandoned, got.State)
		require.Equal(t, "w1", got.WorkerID)
		require.NotEmpty(t, got.AbandonedBy)
	})

	t.Run("a renewal beats a late abandon", func(t *testing.T) {
		t.Parallel()
		c, x := newClaims(t), NewExecutionID()
		held, err := c.Claim(testCtx(t), x, "w1", ttl)
		require.NoError(t, err)
		seen, err := c.Inspect(testCtx(t), x)
		require.NoError(t, err)
		_, err = c.Renew(testCtx(t), held)
		require.NoError(t, err)
		_, err = c.Abandon(testCtx(t), seen, "w2")
		require.ErrorIs(t, err, events.ErrLeaseLost)
	})

	t.Run("invalid arguments", func(t *testing.T) {
		t.Parallel()
		c := newClaims(t)
		_, err := c.Claim(testCtx(t), "a.b", "w1", ttl)
		require.ErrorIs(t, err, events.ErrInvalid)
		_, err = c.Claim(testCtx(t), NewExecutionID(), "", ttl)
		require.ErrorIs(t, err, events.ErrInvalid)
		_, err = c.Claim(testCtx(t), NewExecutionID(), "w1", 0)
		require.ErrorIs(t, err, events.ErrInvalid)
		_, err = c.Inspect(testCtx(t), "a b")
		require.ErrorIs(t, err, events.ErrInvalid)
	})
}
