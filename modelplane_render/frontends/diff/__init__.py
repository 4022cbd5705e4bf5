"""Front end `diff`: render the sources at two git revisions and compare the objects, for review.

Each side is read exactly as `render` reads it (the same `sources` rules and loader, the same
pipeline), but a revision is read from git's objects (`git ls-tree`, `git cat-file --batch`):
the user's checkout and index are never touched, so a diff can run in a dirty tree or in CI.
The work tree side (no HEAD given) is `render`'s own reading of the files on disk.

Objects are matched by API group, kind, namespace and name (a version bump is a change, not a
removal and an addition), and compared as the exact YAML `render` prints for each.

- `revisions`: git's objects read as `render` reads files;
- `sides`: each side rendered by the pipeline, with the file of each object;
- `objects`: how objects are matched and shown;
- `compare`: what changed, and what it means for live pods;
- `report`: text for a terminal, Markdown for a pull request.
"""
