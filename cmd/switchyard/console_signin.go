package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/engine/console"
	"github.com/switchyard-dev/switchyard/events"
)

// consoleSignInName is the file, in the data directory, that lets this
// host's user sign a browser in to the console serve is serving: the
// console's address and the key sign-in codes are minted with. serve
// writes it (mode 0600) when its console starts and removes it when it
// stops.
const consoleSignInName = "console.signin"

// consoleSignIn is the content of console.signin.
type consoleSignIn struct {
	// URL is the console's address, http://HOST:PORT/.
	URL string `json:"url"`
	// Key is the console's sign-in key (console.Options.SignInKey).
	Key []byte `json:"key"`
}

// writeConsoleSignIn records the console's address and sign-in key in dir.
func writeConsoleSignIn(dir string, si consoleSignIn) (string, error) {
	b, err := json.Marshal(si)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, consoleSignInName)
	return path, events.WritePrivateFile(path, b)
}

// readConsoleSignIn reads dir's console.signin. It refuses a file that is
// not a regular file of this user readable by it alone: the key in it
// signs browsers in, so a file anyone else could have written or read is
// not this console's.
func readConsoleSignIn(dir string) (consoleSignIn, error) {
	path := filepath.Join(dir, consoleSignInName)
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		return consoleSignIn{}, failf("no console serves %s (no %s): start switchyard serve --http 127.0.0.1:PORT%s", dir, consoleSignInName, dataDirFlag(dir))
	}
	if err != nil {
		return consoleSignIn{}, failf("%s: %v", path, unwrapPath(err))
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return consoleSignIn{}, failf("%s: %v", path, err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 || !ok || int(sys.Uid) != os.Geteuid() {
		return consoleSignIn{}, failf("%s is not a private file of this user (want a regular file, mode 0600, owned by uid %d); it is not one serve wrote: stop whatever wrote it and start serve --http again", path, os.Geteuid())
	}
	b, err := io.ReadAll(io.LimitReader(fh, 4<<10))
	if err != nil {
		return consoleSignIn{}, failf("%s: %v", path, err)
	}
	var si consoleSignIn
	if err := json.Unmarshal(b, &si); err != nil || si.URL == "" || len(si.Key) != console.SignInKeyBytes {
		return consoleSignIn{}, failf("%s is not a console sign-in file serve wrote; start serve --http again", path)
	}
	return si, nil
}

// signInURL is the console's address with a fresh sign-in code in its
// fragment (a browser sends no fragment in its requests).
func (si consoleSignIn) signInURL(now time.Time) (string, error) {
	code, err := console.SignInCode(si.Key, now)
	if err != nil {
		return "", err
	}
	return si.URL + "#code=" + code, nil
}

// signInValidity says how long a printed code works, for the lines that
// print one.
func signInValidity() string {
	return fmt.Sprintf("it signs one browser tab in, once, within %d minutes", int(console.SignInTTL/time.Minute))
}

// newConsoleURLCmd builds `switchyard console-url`.
func newConsoleURLCmd(stdout, stderr io.Writer) *cobra.Command {
	var dataDir string
	c := &cobra.Command{
		Use:   "console-url [--data-dir D]",
		Short: "Print a one-time sign-in address for the web console serve --http is serving",
		Long: `Print the address of the web console that switchyard serve --http serves
for this data directory, with a new sign-in code in its fragment (#code=...).
Open it in a browser: the page exchanges the code for the console's token,
keeps the token in that tab's session storage (never in a cookie), and drops
the code from the address. ` + "A code works once, within " + fmt.Sprint(int(console.SignInTTL/time.Minute)) + ` minutes; run
console-url again for another tab or after it expired.

It reads <data-dir>/` + consoleSignInName + `, which serve writes (mode 0600) when its
console starts and removes when it stops, so only the user serve runs as
can mint codes. API clients do not sign in: they send
Authorization: Bearer with the token (see docs/CONSOLE.md).

Exit codes: 0 printed; 64 usage error; 1 no console serves the data
directory, or its sign-in file is not one serve wrote.`,
		Example: `  # Sign a browser in to the console of the default data directory:
  xdg-open "$(switchyard console-url)"

  # Of another data directory:
  switchyard console-url --data-dir /tmp/sy`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := locateDataDir(dataDir)
			if err != nil {
				return usagef("%v", err)
			}
			si, err := readConsoleSignIn(dir)
			if err != nil {
				return err
			}
			u, err := si.signInURL(time.Now())
			if err != nil {
				return failf("mint a sign-in code: %v", err)
			}
			fmt.Fprintln(stdout, u)
			return nil
		},
	}
	c.Flags().StringVar(&dataDir, "data-dir", "", dataDirHelp)
	return wireCommand(c, stderr)
}
