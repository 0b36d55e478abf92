package console

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the API's OpenAPI 3.1 document (openapi.json, kept in the
// repository beside the handlers): every /api/v1 route with its
// parameters, bodies, responses and error codes. A test validates every
// handler's requests and responses against it.
//
//go:embed openapi.json
var OpenAPI []byte

// openAPI serves the document (GET /api/v1/openapi.json).
func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(OpenAPI)
}
