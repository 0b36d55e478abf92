package providers

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     Version
		wantErr  bool
	}{
		{name: "stable", in: "2.1.285", want: Version{2, 1, 285}},
		{name: "zeros", in: "0.0.0", want: Version{0, 0, 0}},
		{name: "prerelease", in: "2.1.285-beta.1", wantErr: true},
		{name: "build metadata", in: "2.1.285+abc", wantErr: true},
		{name: "v prefix", in: "v2.1.285", wantErr: true},
		{name: "two parts", in: "2.1", wantErr: true},
		{name: "four parts", in: "2.1.285.1", wantErr: true},
		{name: "leading zero", in: "2.01.285", wantErr: true},
		{name: "empty part", in: "2..285", wantErr: true},
		{name: "letters", in: "2.1.x", wantErr: true},
		{name: "surrounding space", in: " 2.1.285", wantErr: true},
		{name: "trailing newline", in: "2.1.285\n", wantErr: true},
		{name: "sign", in: "+2.1.285", wantErr: true},
		{name: "huge number", in: "2.1.99999999999999999999", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseVersion(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrVersion)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.in, got.String())
		})
	}
}

func TestVersionCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, b string
		want       int
	}{
		{name: "equal", a: "2.1.285", b: "2.1.285", want: 0},
		{name: "patch decides numerically", a: "2.1.99", b: "2.1.285", want: -1},
		{name: "minor beats patch", a: "2.2.0", b: "2.1.999", want: 1},
		{name: "major beats minor", a: "3.0.0", b: "2.99.99", want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b := MustVersion(tt.a), MustVersion(tt.b)
			require.Equal(t, tt.want, a.Compare(b))
			require.Equal(t, -tt.want, b.Compare(a))
			require.Equal(t, tt.want >= 0, a.AtLeast(b))
		})
	}
}

func TestParseClaudeVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, out string
		want      Version
		wantErr   bool
	}{
		{name: "with product suffix", out: "2.1.285 (Claude Code)\n", want: Version{2, 1, 285}},
		{name: "bare", out: "2.1.290\n", want: Version{2, 1, 290}},
		{name: "no newline", out: "2.1.300", want: Version{2, 1, 300}},
		{name: "prerelease", out: "2.2.0-beta (Claude Code)\n", wantErr: true},
		{name: "second line", out: "2.1.285 (Claude Code)\nupdate available\n", wantErr: true},
		{name: "other suffix", out: "2.1.285 (Claude Code) nightly\n", wantErr: true},
		{name: "empty", out: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseClaudeVersion(tt.out)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrVersion)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestParseOpenCodeBanner(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, out string
		want      Version
		contract  OpenCodeContract
		wantErr   bool
	}{
		{name: "bare v1", out: "1.18.32\n", want: Version{1, 18, 32}, contract: OpenCodeV1},
		{name: "v1 floor", out: "1.18.29\n", want: Version{1, 18, 29}, contract: OpenCodeV1},
		{name: "later v1 minor", out: "1.19.0\n", want: Version{1, 19, 0}, contract: OpenCodeV1},
		{name: "prefixed v1", out: "opencode v1.18.32\n", want: Version{1, 18, 32}, contract: OpenCodeV1},
		{name: "prefixed v2", out: "opencode v2.0.27\n", want: Version{2, 0, 27}, contract: OpenCodeV2},
		{name: "bare v2", out: "2.0.0", want: Version{2, 0, 0}, contract: OpenCodeV2},
		{name: "below the v1 floor", out: "1.18.28\n", wantErr: true},
		{name: "unknown major", out: "3.0.0\n", wantErr: true},
		{name: "major zero", out: "0.9.0\n", wantErr: true},
		{name: "prerelease", out: "2.0.0-beta.1\n", wantErr: true},
		{name: "trailing noise", out: "1.18.32 (dev)\n", wantErr: true},
		{name: "second line", out: "1.18.32\nupgrade available\n", wantErr: true},
		{name: "bare v prefix", out: "v1.18.32\n", wantErr: true},
		{name: "malformed", out: "opencode\n", wantErr: true},
		{name: "empty", out: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, contract, err := ParseOpenCodeBanner(tt.out)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrVersion)
				require.Zero(t, contract)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.contract, contract)
		})
	}
}
