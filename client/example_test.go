package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchyard-dev/switchyard/client"
)

// A data directory that holds no Switchyard data: Dial says so with
// ErrNotFound, and creates nothing there.
func ExampleDial_notFound() {
	dir, _ := os.MkdirTemp("", "switchyard-example-")
	defer os.RemoveAll(dir)
	_, err := client.Dial(context.Background(), client.Options{DataDir: filepath.Join(dir, "data")})
	fmt.Println(errors.Is(err, client.ErrNotFound))
	_, statErr := os.Stat(filepath.Join(dir, "data"))
	fmt.Println(os.IsNotExist(statErr))
	// Output:
	// true
	// true
}

// A refused value names its field.
func ExampleInvalidInputError() {
	_, err := client.Dial(context.Background(), client.Options{CredsFile: "/etc/nats/parent.creds"})
	var ie *client.InvalidInputError
	if errors.As(err, &ie) {
		fmt.Println(ie.Field)
	}
	// Output:
	// CredsFile
}

// Submit a run to the data directory's serve, follow its lanes, and print
// its report. (Not run: it needs a `switchyard serve` and a worker; see
// examples/orchestrator for one that starts them.)
func ExampleClient_Submit() {
	ctx := context.Background()
	c, err := client.Dial(ctx, client.Options{DataDir: os.Getenv("SWITCHYARD_DATA_DIR")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	sheet, _ := os.ReadFile("team.sheet")
	run, err := c.Submit(ctx, client.RunRequest{
		RunID: "review-42", Sheet: sheet, Role: "interrogate reviewers", Parent: "claude",
		Prompt: []byte("Review the change on this branch.\n"), Checkout: "/src/app",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for ch, err := range run.Watch(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("lane %d: %s -> %s\n", ch.Lane, ch.From, ch.To)
	}
	rep, err := run.Wait(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(rep.Text())
}
