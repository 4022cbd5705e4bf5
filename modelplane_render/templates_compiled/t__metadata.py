# Generated from templates/_metadata.yaml.j2 by Jinja 3.1.6: don't edit.
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_metadata.yaml.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_metadata = missing
    try:
        t_1 = environment.filters['tojson']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'tojson' found.")
    pass
    def macro(l_1_v):
        t_2 = []
        if l_1_v is missing:
            l_1_v = undefined("parameter 'v' was not provided", name='v')
        pass
        t_2.extend((
            'metadata:\n  name: ',
            str(t_1(environment.getattr(l_1_v, 'name'))),
            '\n  namespace: ',
            str(t_1(environment.getattr(l_1_v, 'namespace'))),
            '\n  labels: ',
            str(t_1(environment.getattr(l_1_v, 'labels'))),
        ))
        if environment.getattr(l_1_v, 'annotations'):
            pass
            t_2.extend((
                '\n  annotations: ',
                str(t_1(environment.getattr(l_1_v, 'annotations'))),
            ))
        return concat(t_2)
    context.exported_vars.add('metadata')
    context.vars['metadata'] = l_0_metadata = Macro(environment, macro, 'metadata', ('v',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'

blocks = {}
debug_info = '2=18&4=25&5=27&6=29&7=31&8=35'
