package console

import "net/http"

// Patterns lists every pattern the server registered, in order: the
// tests walk the served routes, not a list of their own.
func (s *Server) Patterns() []string { return append([]string(nil), s.patterns...) }

// RoutedTo is the registered pattern r reaches ("" when none does).
func (s *Server) RoutedTo(r *http.Request) string {
	_, p := s.mux.Handler(r)
	return p
}

// ErrorCodes are the API's stable error codes.
func ErrorCodes() []string { return append([]string(nil), errorCodes...) }
