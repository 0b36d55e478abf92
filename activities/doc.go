// Package activities hosts the worker loop: it claims jobs, heartbeats,
// watches for cancellation, runs each claimed attempt in-process through
// package runner (typed options in, the receipt as a value out) and
// reports claimed, finished or abandoned. Beside the jobs it measures its
// providers' quota (providers/quota) and keeps their capacity reports current
// in the deployment's capacity store (worker_capacity.go).
package activities
