package engine

import "fmt"

// plural is "1 lane", "3 lanes": n and the word, in the form n takes.
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
