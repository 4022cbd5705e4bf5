# Generated from templates/_pod.yaml.j2 by Jinja 3.1.6: don't edit.
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_pod.yaml.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_containers = l_0_pod = missing
    try:
        t_1 = environment.filters['tojson']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'tojson' found.")
    try:
        t_2 = environment.tests['defined']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No test named 'defined' found.")
    pass
    def macro(l_1_list):
        t_3 = []
        if l_1_list is missing:
            l_1_list = undefined("parameter 'list' was not provided", name='list')
        pass
        for l_2_ct in l_1_list:
            _loop_vars = {}
            pass
            t_3.extend((
                '\n  - name: ',
                str(t_1(environment.getattr(l_2_ct, 'name'))),
                '\n    image: ',
                str(t_1(environment.getattr(l_2_ct, 'image'))),
            ))
            if t_2(environment.getattr(l_2_ct, 'restartPolicy')):
                pass
                t_3.extend((
                    '\n    restartPolicy: ',
                    str(t_1(environment.getattr(l_2_ct, 'restartPolicy'))),
                ))
            if t_2(environment.getattr(l_2_ct, 'command')):
                pass
                t_3.extend((
                    '\n    command: ',
                    str(t_1(environment.getattr(l_2_ct, 'command'))),
                ))
            if t_2(environment.getattr(l_2_ct, 'args')):
                pass
                t_3.extend((
                    '\n    args: ',
                    str(t_1(environment.getattr(l_2_ct, 'args'))),
                ))
            if environment.getattr(l_2_ct, 'env'):
                pass
                t_3.extend((
                    '\n    env: ',
                    str(t_1(environment.getattr(l_2_ct, 'env'))),
                ))
            if environment.getattr(l_2_ct, 'ports'):
                pass
                t_3.extend((
                    '\n    ports: ',
                    str(t_1(environment.getattr(l_2_ct, 'ports'))),
                ))
            if t_2(environment.getattr(l_2_ct, 'lifecycle')):
                pass
                t_3.extend((
                    '\n    lifecycle: ',
                    str(t_1(environment.getattr(l_2_ct, 'lifecycle'))),
                ))
            for (l_3_kind, l_3_probe) in context.call(environment.getattr(environment.getattr(l_2_ct, 'probes'), 'items'), _loop_vars=_loop_vars):
                _loop_vars = {}
                pass
                t_3.extend((
                    '\n    ',
                    str(l_3_kind),
                    ': ',
                    str(t_1(l_3_probe)),
                ))
            l_3_kind = l_3_probe = missing
            if environment.getattr(l_2_ct, 'resources'):
                pass
                t_3.extend((
                    '\n    resources: ',
                    str(t_1(environment.getattr(l_2_ct, 'resources'))),
                ))
            if environment.getattr(l_2_ct, 'volumeMounts'):
                pass
                t_3.extend((
                    '\n    volumeMounts: ',
                    str(t_1(environment.getattr(l_2_ct, 'volumeMounts'))),
                ))
            if t_2(environment.getattr(l_2_ct, 'securityContext')):
                pass
                t_3.extend((
                    '\n    securityContext: ',
                    str(t_1(environment.getattr(l_2_ct, 'securityContext'))),
                ))
        l_2_ct = missing
        return concat(t_3)
    context.exported_vars.add('containers')
    context.vars['containers'] = l_0_containers = Macro(environment, macro, 'containers', ('list',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_p):
        t_4 = []
        if l_1_p is missing:
            l_1_p = undefined("parameter 'p' was not provided", name='p')
        pass
        t_4.extend((
            'metadata:\n  labels: ',
            str(t_1(environment.getattr(l_1_p, 'labels'))),
        ))
        if environment.getattr(l_1_p, 'annotations'):
            pass
            t_4.extend((
                '\n  annotations: ',
                str(t_1(environment.getattr(l_1_p, 'annotations'))),
            ))
        t_4.extend((
            '\nspec:\n  terminationGracePeriodSeconds: ',
            str(t_1(environment.getattr(l_1_p, 'termination_grace_period'))),
            '\n  enableServiceLinks: false',
        ))
        if environment.getattr(l_1_p, 'service_account'):
            pass
            t_4.extend((
                '\n  serviceAccountName: ',
                str(t_1(environment.getattr(l_1_p, 'service_account'))),
            ))
        if environment.getattr(l_1_p, 'priority_class'):
            pass
            t_4.extend((
                '\n  priorityClassName: ',
                str(t_1(environment.getattr(l_1_p, 'priority_class'))),
            ))
        t_4.extend((
            '\n  nodeSelector: ',
            str(t_1(environment.getattr(l_1_p, 'node_selector'))),
        ))
        if environment.getattr(l_1_p, 'affinity'):
            pass
            t_4.extend((
                '\n  affinity: ',
                str(t_1(environment.getattr(l_1_p, 'affinity'))),
            ))
        if environment.getattr(l_1_p, 'tolerations'):
            pass
            t_4.extend((
                '\n  tolerations: ',
                str(t_1(environment.getattr(l_1_p, 'tolerations'))),
            ))
        if environment.getattr(l_1_p, 'image_pull_secrets'):
            pass
            t_4.extend((
                '\n  imagePullSecrets: ',
                str(t_1(environment.getattr(l_1_p, 'image_pull_secrets'))),
            ))
        if environment.getattr(l_1_p, 'claims'):
            pass
            t_4.extend((
                '\n  resourceClaims: ',
                str(t_1(environment.getattr(l_1_p, 'claims'))),
            ))
        if environment.getattr(l_1_p, 'init_containers'):
            pass
            t_4.extend((
                '\n  initContainers:',
                str(context.call((undefined(name='containers') if l_0_containers is missing else l_0_containers), environment.getattr(l_1_p, 'init_containers'))),
            ))
        t_4.extend((
            '\n  containers:',
            str(context.call((undefined(name='containers') if l_0_containers is missing else l_0_containers), environment.getattr(l_1_p, 'containers'))),
            '\n  volumes: ',
            str(t_1(environment.getattr(l_1_p, 'volumes'))),
        ))
        return concat(t_4)
    context.exported_vars.add('pod')
    context.vars['pod'] = l_0_pod = Macro(environment, macro, 'pod', ('p',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'

blocks = {}
debug_info = '2=24&3=29&4=34&5=36&6=38&7=42&9=44&10=48&12=50&13=54&15=56&16=60&18=62&19=66&21=68&22=72&24=74&25=79&27=84&28=88&30=90&31=94&33=96&34=100&38=106&40=113&41=115&42=119&45=123&47=126&48=130&50=132&51=136&53=140&54=142&55=146&57=148&58=152&60=154&61=158&63=160&64=164&66=166&68=170&71=174&72=176'
