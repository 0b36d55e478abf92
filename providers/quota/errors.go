package quota

import "errors"

// errNotObject is an internal decoding failure; it never leaves the
// package (failures leave as reason codes).
var errNotObject = errors.New("not a JSON object")
