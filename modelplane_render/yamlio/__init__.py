"""The one place that reads and writes YAML with PyYAML.

- `libyaml`: the loader and dumper classes and the output's style (block, keys as given,
  literal blocks for multi-line strings), and the reading and writing of whole documents;
- `fast`: the templates' own YAML read and written with re, json and str, as libyaml would;
- `scalars`: how a plain scalar resolves and how a string or int goes out, remembered per text.

- `loader`: a source file read as kubectl reads it, with the line and column of every node, within
  the limits on size, nodes and depth; `document`: one such document and where its errors are.
"""
