package secret

import "testing"

func TestSplitURL(t *testing.T) {
	cases := []struct {
		in, clean, user, pass string
		hasUser, hasPass      bool
	}{
		{in: "http://alice:PASSWORD@host:8000", clean: "http://host:8000", user: "alice", pass: "PASSWORD", hasUser: true, hasPass: true},
		{in: "https://alice:p%40ss@h/v1?x=1", clean: "https://h/v1?x=1", user: "alice", pass: "p@ss", hasUser: true, hasPass: true},
		{in: "alice:pw@host:1/v1", clean: "host:1/v1", user: "alice", pass: "pw", hasUser: true, hasPass: true},
		{in: "http://tok@host", clean: "http://host", user: "tok", hasUser: true},
		{in: "http://a:b@c@host/x@y", clean: "http://host/x@y", user: "a", pass: "b@c", hasUser: true, hasPass: true},
		{in: "http://host:8000/v1", clean: "http://host:8000/v1"},
		{in: "builtin", clean: "builtin"},
		{in: "", clean: ""},
		{in: "http://u:%zz@h", clean: "http://h", user: "u", pass: "%zz", hasUser: true, hasPass: true},
	}
	for _, c := range cases {
		clean, ui := SplitURL(c.in)
		if clean != c.clean {
			t.Errorf("SplitURL(%q) clean = %q, want %q", c.in, clean, c.clean)
		}
		if (ui != nil) != c.hasUser {
			t.Errorf("SplitURL(%q) user-info = %v, want present=%v", c.in, ui, c.hasUser)
			continue
		}
		if ui == nil {
			continue
		}
		p, ok := ui.Password()
		if ui.Username() != c.user || p != c.pass || ok != c.hasPass {
			t.Errorf("SplitURL(%q) = %q/%q/%v, want %q/%q/%v", c.in, ui.Username(), p, ok, c.user, c.pass, c.hasPass)
		}
		if Strip(c.in) != c.clean {
			t.Errorf("Strip(%q) = %q", c.in, Strip(c.in))
		}
	}
}
