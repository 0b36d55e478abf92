// Package policy decides, from a frozen model sheet and a lane's history,
// what a lane does next; it is pure (standard library only, no I/O, no
// clock), so every decision can be replayed.
//
// The vocabulary follows the provider-dispatch contract: descriptors
// (<provider>:<model>@<effort>), the model matrix, the sheet grammar with
// its role catalog, and the four operations Validate, Resolve, Next and
// Normalize that `switchyard policy` exposes as a drop-in for the reference
// helper.
package policy
