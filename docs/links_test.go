// Package docs holds the user documentation; its tests check that what the
// documents say can be followed: every link and repository path exists,
// nothing points outside the repository, the README's quick start runs, and
// every command output they show matches what the command prints.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// repoRoot is the repository, one level above this package.
const repoRoot = ".."

// documents lists README.md and every Markdown file under docs/, relative
// to the repository root.
func documents(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) < 10 {
		t.Fatalf("found only %d documents (%v); is the test running in docs/?", len(files), files)
	}
	return files
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pending names documents that other work of this session still edits and
// that keep references to design notes outside the repository; they are
// checked for links and paths like every other, and leave this list once
// cleaned (the test fails while a listed file is already clean, so the
// list cannot go stale).
var pending = map[string]bool{
	"docs/PROVIDERS.md":  true,
	"docs/decisions.md":  true,
	"docs/GUARANTEES.md": true,
}

// outside matches references to documents that are not in the repository:
// the design notes and contracts the project was built from.
var outside = regexp.MustCompile(`\.\./shared|/work/|\bseeds/|\b(DESIGN|STYLE|PROVIDER-PROTOCOLS|QUOTA-PROTOCOLS|POLICY-CLI)\.md|(^|[^/A-Za-z])RUNNER\.md §`)

// TestDocsStayInsideTheRepository: a newcomer has only the repository, so
// no document may send them to a file, helper or note outside it.
func TestDocsStayInsideTheRepository(t *testing.T) {
	for _, f := range documents(t) {
		var hits []string
		for i, line := range strings.Split(read(t, f), "\n") {
			if outside.MatchString(line) {
				hits = append(hits, f+":"+itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		switch {
		case pending[f] && len(hits) == 0:
			t.Errorf("%s no longer refers outside the repository: remove it from pending", f)
		case !pending[f]:
			for _, h := range hits {
				t.Errorf("refers to a document outside the repository: %s", h)
			}
		}
	}
}

var (
	// mdLink is an inline Markdown link or image: [text](target).
	mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	// codeSpan is an inline code span.
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// repoPath is a code span that names a path in the repository: it
	// starts with one of the repository's top-level directories.
	repoPath = regexp.MustCompile(`^(activities|client|cmd|docs|engine|events|examples|machines|policy|providers|scripts|testdata)/[A-Za-z0-9_./-]*$`)
	// citation marks a line of PROVIDERS.md's evidence tables, which cite
	// files of the providers' own repositories ([docs], [source]).
	citation = regexp.MustCompile(`\[(docs|source)\]`)
	// heading is a Markdown ATX heading.
	heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
)

// slug is the anchor GitHub gives a heading: lower case, punctuation
// other than hyphens and underscores dropped, spaces made hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '…' && r != '→' && r != '—':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading anchors of a Markdown text, outside code
// blocks.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(stripFences(text), -1) {
		out[slug(m[1])] = true
	}
	return out
}

// stripFences blanks fenced code blocks (their lines stay, empty), so
// shell comments are not read as headings nor examples as links.
func stripFences(text string) string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// TestDocLinksExist: every relative link of README.md and docs/ reaches a
// file of the repository (and, with #anchor, a heading of that file), and
// every repository path a document names in a code span exists. The HTTP
// API and Go client pages are linked from the index before they land.
func TestDocLinksExist(t *testing.T) {
	checked := 0
	for _, f := range documents(t) {
		text := read(t, f)
		prose := stripFences(text)
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			path := f
			if file != "" {
				path = filepath.Join(filepath.Dir(f), file)
			}
			if _, err := os.Stat(filepath.Join(repoRoot, path)); err != nil {
				if expectedSoon[filepath.ToSlash(path)] {
					continue
				}
				t.Errorf("%s: link %q: %s does not exist", f, target, path)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(read(t, path))[anchor] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", f, target, path, anchor)
			}
		}
		for _, line := range strings.Split(prose, "\n") {
			if citation.MatchString(line) {
				continue
			}
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				p := strings.TrimRight(m[1], ".,;:")
				if !repoPath.MatchString(p) || !pathLike(p) {
					continue
				}
				checked++
				if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
					t.Errorf("%s: names %s, which is not in the repository", f, p)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d links and paths; the patterns no longer match the documents", checked)
	}
}

// pathLike tells a path from a name that merely starts like one (a
// benchmark's "engine/raw", a rate's "events/s"): it has a file extension,
// ends with a slash, or has three segments or more.
func pathLike(p string) bool {
	last := p[strings.LastIndex(p, "/")+1:]
	return strings.Contains(last, ".") || strings.HasSuffix(p, "/") || strings.Count(p, "/") >= 2
}

// expectedSoon are documents the index may link before they exist; none
// now.
var expectedSoon = map[string]bool{}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
