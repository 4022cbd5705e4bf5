# Generated from templates/inferencepool.yaml.j2 by Jinja 3.1.6: don't edit.
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'inferencepool.yaml.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_v = resolve('v')
    l_0_metadata = missing
    try:
        t_1 = environment.filters['tojson']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'tojson' found.")
    pass
    included_template = environment.get_template('_metadata.yaml.j2', 'inferencepool.yaml.j2')._get_default_module(context)
    l_0_metadata = getattr(included_template, 'metadata', missing)
    if l_0_metadata is missing:
        l_0_metadata = undefined(f"the template {included_template.__name__!r} (imported on line 1 in 'inferencepool.yaml.j2') does not export the requested name 'metadata'", name='metadata')
    context.vars['metadata'] = l_0_metadata
    context.exported_vars.discard('metadata')
    yield '\napiVersion: inference.networking.k8s.io/v1\nkind: InferencePool\n'
    yield str(context.call((undefined(name='metadata') if l_0_metadata is missing else l_0_metadata), (undefined(name='v') if l_0_v is missing else l_0_v)))
    yield '\nspec:\n  selector:\n    matchLabels: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'selector')))
    yield '\n  targetPorts:\n  - number: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'target_port')))
    yield '\n  endpointPickerRef:\n    name: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'picker')))
    yield '\n    port:\n      number: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'picker_port')))
    yield '\n    failureMode: FailOpen\n'

blocks = {}
debug_info = '1=19&4=26&7=28&9=30&11=32&13=34'
