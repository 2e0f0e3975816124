package pluginpkg

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles docs/manifest.schema.json.
func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	const path = "../docs/manifest.schema.json"
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://github.com/extkernel/extkernel/docs/manifest.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	return sch
}

func schemaValidate(t *testing.T, sch *jsonschema.Schema, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode instance: %v", err)
	}
	return sch.Validate(inst)
}

// TestSchemaAgreesWithParse checks docs/manifest.schema.json against Parse:
// every valid example passes both; every broken example whose rule the
// schema can express is rejected by both, and the schema accepts the ones
// it cannot express (so the table's verdicts stay honest).
func TestSchemaAgreesWithParse(t *testing.T) {
	sch := compileSchema(t)
	valid, _ := filepath.Glob(filepath.Join(manifestsDir, "valid", "*"))
	for _, dir := range valid {
		t.Run("valid/"+filepath.Base(dir), func(t *testing.T) {
			data := readManifestFile(t, dir)
			if err := schemaValidate(t, sch, data); err != nil {
				t.Errorf("schema rejects a valid manifest: %v", err)
			}
			if _, err := Parse(dir, data); err != nil {
				t.Errorf("Parse rejects a valid manifest: %v", err)
			}
		})
	}
	for _, tc := range brokenManifests {
		if tc.schema == syntax {
			continue
		}
		t.Run("broken/"+tc.rule, func(t *testing.T) {
			data := readManifestFile(t, filepath.Join(manifestsDir, "broken", tc.rule))
			if _, err := Parse(tc.rule, data); err == nil {
				t.Error("Parse accepts a broken manifest")
			}
			err := schemaValidate(t, sch, data)
			switch {
			case tc.schema == schema && err == nil:
				t.Error("schema accepts a manifest it is marked to reject")
			case tc.schema == parseOnly && err != nil:
				t.Errorf("schema rejects a manifest marked parseOnly (mark it schema): %v", err)
			}
		})
	}
}
