package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// SignInTTL is how long a sign-in code is accepted after it is minted.
const SignInTTL = 5 * time.Minute

// SignInKeyBytes is the size of a sign-in key.
const SignInKeyBytes = 32

// A sign-in code is base64url(expiry | nonce | mac): the expiry in Unix
// seconds (8 bytes, big endian), a random nonce (16 bytes) and
// HMAC-SHA256 over the label, the expiry and the nonce under the sign-in
// key (32 bytes). Whoever can read the key (the data directory's owner)
// mints codes without asking the server; the server accepts each nonce
// once.
const (
	codeNonceBytes = 16
	codeBytes      = 8 + codeNonceBytes + sha256.Size
	codeLabel      = "switchyard console sign-in v1\x00"
)

// Sign-in refusals; the message of each says how to get a new code.
var (
	errCodeMalformed = errors.New("sign-in code is not one switchyard minted")
	errCodeExpired   = errors.New("sign-in code has expired")
	errCodeUsed      = errors.New("sign-in code was already used")
)

// NewSignInKey draws a key for Options.SignInKey.
func NewSignInKey() ([]byte, error) {
	k := make([]byte, SignInKeyBytes)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	return k, nil
}

// SignInCode mints a single-use code, valid for SignInTTL from now, that
// the console with this key exchanges once for its token.
func SignInCode(key []byte, now time.Time) (string, error) {
	var b [codeBytes]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.Add(SignInTTL).Unix()))
	if _, err := rand.Read(b[8 : 8+codeNonceBytes]); err != nil {
		return "", err
	}
	copy(b[8+codeNonceBytes:], codeMAC(key, b[:8+codeNonceBytes]))
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

func codeMAC(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(codeLabel))
	m.Write(msg)
	return m.Sum(nil)
}

// usedCodes remembers the nonces of exchanged codes until they expire.
type usedCodes struct {
	mu    sync.Mutex
	nonce map[string]time.Time // nonce → expiry
}

// redeem checks code against key and now and marks it used: a code is
// accepted once, before its expiry.
func (u *usedCodes) redeem(key []byte, code string, now time.Time) error {
	b, err := base64.RawURLEncoding.DecodeString(code)
	if err != nil || len(b) != codeBytes || !hmac.Equal(b[8+codeNonceBytes:], codeMAC(key, b[:8+codeNonceBytes])) {
		return errCodeMalformed
	}
	expiry := time.Unix(int64(binary.BigEndian.Uint64(b[:8])), 0)
	if !now.Before(expiry) {
		return errCodeExpired
	}
	nonce := string(b[8 : 8+codeNonceBytes])
	u.mu.Lock()
	defer u.mu.Unlock()
	for n, exp := range u.nonce { // a used code that expired is refused as expired anyway
		if !now.Before(exp) {
			delete(u.nonce, n)
		}
	}
	if _, used := u.nonce[nonce]; used {
		return errCodeUsed
	}
	u.nonce[nonce] = expiry
	return nil
}

// signInRequest is the body of POST /api/v1/signin.
type signInRequest struct {
	Code string `json:"code"`
}

// signInResult is its answer: the bearer token the page sends from then
// on.
type signInResult struct {
	Token string `json:"token"`
}

// maxSignInBytes caps a sign-in request's body.
const maxSignInBytes = 4 << 10

// signIn exchanges a sign-in code (JSON {"code"}) for the token. It is
// served without the token (the code is the credential) and answers only
// a JSON body: a cross-origin page cannot send one without a preflight
// this server never grants, and it could not read the answer anyway.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if len(s.o.SignInKey) == 0 {
		s.fail(w, http.StatusNotFound, "this console has no sign-in codes: send Authorization: Bearer <the token> instead")
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		s.fail(w, http.StatusBadRequest, `sign in with a JSON body {"code": "..."} (Content-Type: application/json)`)
		return
	}
	var req signInRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSignInBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.fail(w, http.StatusBadRequest, `read the sign-in request: want JSON {"code": "..."}: %v`, err)
		return
	}
	if err := s.codes.redeem(s.o.SignInKey, req.Code, time.Now()); err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="switchyard"`)
		s.fail(w, http.StatusUnauthorized, "%v: each code signs in once, within %s; print a new sign-in address with `switchyard console-url` (on the serve's host, as its user, with its --data-dir)", err, SignInTTL)
		return
	}
	writeJSON(w, http.StatusOK, signInResult{Token: s.o.Token})
}
