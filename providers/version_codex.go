package providers

import (
	"fmt"
	"strings"
)

// codexBannerPrefix starts the one line `codex --version` prints.
const codexBannerPrefix = "codex-cli "

// ParseCodexBanner reads `codex --version`: "codex-cli MAJOR.MINOR.PATCH"
// on one line (verified against codex 0.171.0). Prereleases, other
// prefixes and extra lines are errors.
func ParseCodexBanner(out string) (Version, error) {
	line, err := singleLine(out)
	if err != nil {
		return Version{}, err
	}
	v, ok := strings.CutPrefix(line, codexBannerPrefix)
	if !ok {
		return Version{}, fmt.Errorf("%w: %q is not a codex-cli banner", ErrVersion, clip(line))
	}
	return ParseVersion(v)
}
