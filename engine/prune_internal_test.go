package engine

import "testing"

// TestPrunable: prune removes only paths strictly inside their root, and
// never the run's checkout or a directory holding it.
func TestPrunable(t *testing.T) {
	const root, checkout = "/data/worktrees/r1", "/data/worktrees/r1/L0/x/src"
	for _, tc := range []struct {
		name, path string
		ok         bool
	}{
		{"a worktree", "/data/worktrees/r1/L0/e1", true},
		{"the root itself", "/data/worktrees/r1", false},
		{"outside", "/home/me/src", false},
		{"dot-dot escape", "/data/worktrees/r1/../r2/L0/e1", false},
		{"relative", "worktrees/r1/L0/e1", false},
		{"the checkout", checkout, false},
		{"holds the checkout", "/data/worktrees/r1/L0/x", false},
		{"a sibling named like the checkout", "/data/worktrees/r1/L0/x/src2", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := prunable(tc.path, root, checkout)
			if (err == nil) != tc.ok {
				t.Fatalf("prunable(%q) = %v, want ok %v", tc.path, err, tc.ok)
			}
		})
	}
}
