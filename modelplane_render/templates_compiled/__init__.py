"""templates/ compiled by Jinja ahead of time (modelplane_render.render.write_compiled_templates): the name of each
template, and the digest of the text and the Jinja version it was compiled from. Generated: don't edit."""

COMPILED = {
    '_metadata.yaml.j2': ('f955460f425d6fed993a48ffc4c6d03e', '3.1.6'),
    '_pod.yaml.j2': ('e3409e902d90e3ab937642b274ce0949', '3.1.6'),
    'configmap.yaml.j2': ('12e43a0853abfd08c8dbb5f7c7a6cc02', '3.1.6'),
    'deployment.yaml.j2': ('160f679b760f5608976cad0da9da808d', '3.1.6'),
    'httproute.yaml.j2': ('247870ca166313f35944dfbff48ebbc9', '3.1.6'),
    'inferencepool.yaml.j2': ('b9d5832e4953162293215e7fa95540e0', '3.1.6'),
    'leaderworkerset.yaml.j2': ('c4d629996d5bfaeb2051b1b3415ad0b5', '3.1.6'),
    'resourceclaimtemplate.yaml.j2': ('0d75b70412fd8d14d294ac6d5b5f3396', '3.1.6'),
    'role.yaml.j2': ('e0fb7924ca1fdd5122fa5de598fe0a94', '3.1.6'),
    'rolebinding.yaml.j2': ('7f8667d7640e71950d8fb9430ff6f525', '3.1.6'),
    'service.yaml.j2': ('f6be36f23d546008b76453291d4bc233', '3.1.6'),
    'serviceaccount.yaml.j2': ('fef49116aef4d100ed1d37964d71a7f9', '3.1.6'),
}
