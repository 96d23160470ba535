package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// A Profile is a named config saved by the user, in the export format
// (ExportJSON: no URL, no credential), under Dir()/profiles/NAME.json.
type Profile struct {
	Name     string
	Path     string
	Workload string
	Modified time.Time
	// Err is set when the file exists but does not load; the profile is
	// still listed so the user can see and delete it.
	Err error
}

// Profiles is the profile store of one config directory; the package
// functions use Dir().
type Profiles struct{ Dir string }

// ProfilesDir is where profiles live.
func (p Profiles) ProfilesDir() string { return filepath.Join(p.Dir, "profiles") }

var profileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckProfileName reports whether name is usable as a profile (and file)
// name: letters, digits, '.', '_' and '-', at most 64, not starting with
// a dot or a dash.
func CheckProfileName(name string) error {
	if !profileName.MatchString(name) {
		return fmt.Errorf("profile name %q: use letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)", name)
	}
	return nil
}

func (p Profiles) path(name string) string {
	return filepath.Join(p.ProfilesDir(), name+".json")
}

// List returns the saved profiles sorted by name; a missing directory is
// an empty list.
func (p Profiles) List() ([]Profile, error) {
	entries, err := os.ReadDir(p.ProfilesDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	var out []Profile
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() || CheckProfileName(name) != nil {
			continue
		}
		pr := Profile{Name: name, Path: p.path(name)}
		if info, err := e.Info(); err == nil {
			pr.Modified = info.ModTime()
		}
		if c, err := p.Load(name); err != nil {
			pr.Err = err
		} else {
			pr.Workload = c.Workload()
		}
		out = append(out, pr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Save writes c as profile name, atomically, replacing a profile of the
// same name. Only the export format is written: never a URL or a key.
func (p Profiles) Save(name string, c *Config) error {
	if err := CheckProfileName(name); err != nil {
		return err
	}
	if c.Workload() == "" {
		return fmt.Errorf("profile %s: no workload chosen", name)
	}
	if err := os.MkdirAll(p.ProfilesDir(), 0o755); err != nil {
		return fmt.Errorf("save profile %s: %w", name, err)
	}
	if err := WriteFileAtomic(p.path(name), c.ExportJSON(), 0o644); err != nil {
		return fmt.Errorf("save profile %s: %w", name, err)
	}
	return nil
}

// Load reads profile name on top of the defaults.
func (p Profiles) Load(name string) (*Config, error) {
	if err := CheckProfileName(name); err != nil {
		return nil, err
	}
	c := Default()
	if err := c.LoadJSON(p.path(name)); err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	return c, nil
}

// Delete removes profile name.
func (p Profiles) Delete(name string) error {
	if err := CheckProfileName(name); err != nil {
		return err
	}
	if err := os.Remove(p.path(name)); err != nil {
		return fmt.Errorf("delete profile %s: %w", name, unwrapPathErr(err))
	}
	return nil
}

// ListProfiles lists the profiles of Dir().
func ListProfiles() ([]Profile, error) { return Profiles{Dir()}.List() }

// SaveProfile saves c as profile name in Dir().
func SaveProfile(name string, c *Config) error { return Profiles{Dir()}.Save(name, c) }

// LoadProfile loads profile name from Dir().
func LoadProfile(name string) (*Config, error) { return Profiles{Dir()}.Load(name) }

// DeleteProfile deletes profile name from Dir().
func DeleteProfile(name string) error { return Profiles{Dir()}.Delete(name) }
