// Command modelplane-goyaml reads a YAML stream on stdin as Go's Kubernetes tools read it and
// prints each document as the JSON they go on with, one document a line, so tests can compare
// Go's reading of our output with PyYAML's, value for value and type for type.
//
// Default: kubectl's reader (kubectl apply/create -f). cli-runtime's FileVisitor
// (pkg/resource/visitor.go) drops a byte-order mark, and its StreamVisitor decodes the file with
// k8s.io/apimachinery/pkg/util/yaml.NewYAMLOrJSONDecoder(r, 4096) into a runtime.RawExtension:
// the stream is split into documents by the YAMLReader (a line starting with "---"), and each
// document goes through sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 plain scalars) to JSON; a
// RawExtension is a json.Unmarshaler, so that is exactly sigs.k8s.io/yaml.YAMLToJSON. Empty and null documents are skipped, as kubectl skips them. The first
// error stops the run, as it stops kubectl: the error goes to stderr and the exit code is 1.
// Argo CD's repo-server and the API server's YAML decoding use the same sigs.k8s.io/yaml.
//
// -v3: kustomize's reader: kyaml's document splitter, then go-yaml v3 (go.yaml.in/yaml/v3, what
// kyaml uses) per document, into interface{}, printed as JSON (a timestamp prints as Go's RFC 3339
// time: go-yaml v3 resolved it as a time, not a string).
//
// -each: keep going past a document that fails; every document prints one line,
// {"value": <document>} or {"error": "<message>"}, and the exit code is 1 if any failed.
// Only a stream the splitter itself refuses stops the run. This lets one process read
// a corpus of many documents and say which of them fail. It combines with -v3. (A JSON
// stream, which kubectl reads as one, is split here like YAML; tests give it YAML.)
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	yamlv3 "go.yaml.in/yaml/v3"
)

func main() {
	v3 := flag.Bool("v3", false, "read with go-yaml v3 (kustomize's kyaml) instead of kubectl's reader")
	each := flag.Bool("each", false, `keep going past a failing document: print {"value": ...} or {"error": ...} for each`)
	flag.Parse()

	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	failed := false
	emit := func(doc []byte, err error) {
		switch {
		case err != nil && *each:
			line, _ := json.Marshal(map[string]string{"error": err.Error()})
			out.Write(append(line, '\n'))
			failed = true
		case err != nil:
			out.Flush()
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		case *each:
			out.WriteString(`{"value":`)
			out.Write(doc)
			out.WriteString("}\n")
		default:
			out.Write(append(doc, '\n'))
		}
	}

	var err error
	switch {
	case *v3:
		err = readV3(os.Stdin, emit)
	case *each:
		err = readEach(kubectlFile(os.Stdin), emit)
	default:
		err = readKubectl(kubectlFile(os.Stdin), emit)
	}
	if err != nil {
		out.Flush()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out.Flush()
	if failed {
		os.Exit(1)
	}
}

// kubectlFile is cli-runtime's FileVisitor.Visit: a file (or stdin) is read through a decoder
// that drops one leading byte-order mark, decodes UTF-16 when its BOM says so, and replaces
// invalid UTF-8 with U+FFFD, before the StreamVisitor sees it.
func kubectlFile(r io.Reader) io.Reader {
	return transform.NewReader(r, unicode.BOMOverride(unicode.UTF8.NewDecoder()))
}

// readKubectl is cli-runtime's StreamVisitor.Visit without the schema check and the REST mapping.
func readKubectl(r io.Reader, emit func([]byte, error)) error {
	d := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	for {
		doc, err := decodeOne(d)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if doc != nil {
			emit(doc, nil)
		}
	}
}

// readEach splits the stream with kubectl's YAMLReader and gives each document a decoder of its
// own, the same NewYAMLOrJSONDecoder: for a YAML stream each document reads exactly as it does
// in readKubectl, and a failing document cannot stop the ones after it.
func readEach(r io.Reader, emit func([]byte, error)) error {
	split := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for {
		chunk, err := split.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err // the splitter's own error (a bad "---" line): there is no next document
		}
		doc, err := decodeOne(utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(chunk), 4096))
		if err == io.EOF {
			continue
		}
		if err != nil || doc != nil {
			emit(doc, err)
		}
	}
}

// decodeOne is one turn of StreamVisitor.Visit's loop: decode into a runtime.RawExtension, trim,
// and skip (nil, nil) an empty or null document. A JSON stream's RawExtension holds the text as
// written; it is compacted onto one line.
func decodeOne(d *utilyaml.YAMLOrJSONDecoder) ([]byte, error) {
	ext := runtime.RawExtension{}
	if err := d.Decode(&ext); err != nil {
		return nil, err
	}
	ext.Raw = bytes.TrimSpace(ext.Raw)
	if len(ext.Raw) == 0 || bytes.Equal(ext.Raw, []byte("null")) {
		return nil, nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, ext.Raw); err != nil {
		return nil, err
	}
	return compact.Bytes(), nil
}

// readV3 is kyaml's kio.ByteReader.Read: CRLF becomes LF, the stream is split on lines starting
// with "---" (kyaml's splitDocuments), and each document is decoded by go-yaml v3, here into
// interface{} rather than a yaml.Node (the same tag resolution). Empty and null documents are
// skipped, as kyaml skips them.
func readV3(r io.Reader, emit func([]byte, error)) error {
	input, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	docs, err := splitDocuments(strings.ReplaceAll(string(input), "\r\n", "\n"))
	if err != nil {
		return err
	}
	for i, text := range docs {
		if i != len(docs)-1 {
			text += "\n" // the split eats each document's last line break
		}
		var doc interface{}
		err := yamlv3.NewDecoder(strings.NewReader(text)).Decode(&doc)
		if err == io.EOF || (err == nil && doc == nil) {
			continue
		}
		if err == nil {
			var value interface{}
			if value, err = jsonable(doc); err == nil {
				var line []byte
				if line, err = json.Marshal(value); err == nil {
					emit(line, nil)
					continue
				}
			}
		}
		emit(nil, err)
	}
	return nil
}

// splitDocuments is kyaml's (kio/byteio_reader.go): a separator is a line starting with "---",
// followed by nothing but spaces or a comment.
func splitDocuments(s string) ([]string, error) {
	var docs []string
	if len(s) == 0 {
		return docs, nil
	}
	prev := 0
	for _, loc := range separator.FindAllStringIndex(s, -1) {
		rest := strings.TrimSpace(s[loc[0]+4 : loc[1]])
		if len(rest) > 0 && rest[0] != '#' {
			return nil, fmt.Errorf("invalid document separator: %s", strings.TrimSpace(s[loc[0]:loc[1]]))
		}
		docs = append(docs, s[prev:loc[0]])
		prev = loc[1]
	}
	return append(docs, s[prev:]), nil
}

var separator = regexp.MustCompile(`\n---.*\n`)

// jsonable turns go-yaml v3's map[interface{}]interface{} (a mapping with a key that is not a
// string) into a map with string keys, spelling the keys as sigs.k8s.io/yaml spells them.
func jsonable(v interface{}) (interface{}, error) {
	switch v := v.(type) {
	case map[string]interface{}:
		m := make(map[string]interface{}, len(v))
		for k, e := range v {
			j, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			m[k] = j
		}
		return m, nil
	case map[interface{}]interface{}:
		m := make(map[string]interface{}, len(v))
		for k, e := range v {
			var key string
			switch k := k.(type) {
			case string:
				key = k
			case int:
				key = strconv.Itoa(k)
			case int64:
				key = strconv.FormatInt(k, 10)
			case uint64:
				key = strconv.FormatUint(k, 10)
			case float64:
				key = strconv.FormatFloat(k, 'g', -1, 32)
			case bool:
				key = strconv.FormatBool(k)
			default:
				return nil, fmt.Errorf("unsupported map key of type: %s, key: %+#v", reflect.TypeOf(k), k)
			}
			j, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			m[key] = j
		}
		return m, nil
	case []interface{}:
		a := make([]interface{}, len(v))
		for i, e := range v {
			j, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			a[i] = j
		}
		return a, nil
	}
	return v, nil
}
