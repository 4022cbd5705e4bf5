# Generated from templates/leaderworkerset.yaml.j2 by Jinja 3.1.6: don't edit.
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'leaderworkerset.yaml.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_v = resolve('v')
    l_0_metadata = l_0_pod = missing
    try:
        t_1 = environment.filters['indent']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'indent' found.")
    try:
        t_2 = environment.filters['tojson']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'tojson' found.")
    try:
        t_3 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    included_template = environment.get_template('_metadata.yaml.j2', 'leaderworkerset.yaml.j2')._get_default_module(context)
    l_0_metadata = getattr(included_template, 'metadata', missing)
    if l_0_metadata is missing:
        l_0_metadata = undefined(f"the template {included_template.__name__!r} (imported on line 1 in 'leaderworkerset.yaml.j2') does not export the requested name 'metadata'", name='metadata')
    context.vars['metadata'] = l_0_metadata
    context.exported_vars.discard('metadata')
    included_template = environment.get_template('_pod.yaml.j2', 'leaderworkerset.yaml.j2')._get_default_module(context)
    l_0_pod = getattr(included_template, 'pod', missing)
    if l_0_pod is missing:
        l_0_pod = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'leaderworkerset.yaml.j2') does not export the requested name 'pod'", name='pod')
    context.vars['pod'] = l_0_pod
    context.exported_vars.discard('pod')
    yield '\napiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n'
    yield str(context.call((undefined(name='metadata') if l_0_metadata is missing else l_0_metadata), (undefined(name='v') if l_0_v is missing else l_0_v)))
    yield '\nspec:'
    if (not t_3(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'replicas'))):
        pass
        yield '\n  replicas: '
        yield str(t_2(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'replicas')))
    yield '\n  startupPolicy: LeaderCreated\n  networkConfig:\n    subdomainPolicy: Shared\n  rolloutStrategy:\n    type: RollingUpdate\n    rollingUpdateConfiguration:\n      maxUnavailable: 1\n      maxSurge: 0\n  leaderWorkerTemplate:\n    size: '
    yield str(t_2(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'size')))
    yield '\n    restartPolicy: RecreateGroupOnPodRestart'
    if environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'leader'):
        pass
        yield '\n    leaderTemplate:\n      '
        yield str(t_1(context.call((undefined(name='pod') if l_0_pod is missing else l_0_pod), environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'leader')), 6))
    yield '\n    workerTemplate:\n      '
    yield str(t_1(context.call((undefined(name='pod') if l_0_pod is missing else l_0_pod), environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'worker')), 6))
    yield '\n'

blocks = {}
debug_info = '1=31&2=37&5=44&7=46&8=49&19=51&21=53&23=56&26=58'
