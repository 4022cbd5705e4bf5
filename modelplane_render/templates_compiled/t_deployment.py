# Generated from templates/deployment.yaml.j2 by Jinja 3.1.6: don't edit.
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'deployment.yaml.j2'

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
    try:
        t_2 = environment.tests['defined']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No test named 'defined' found.")
    pass
    included_template = environment.get_template('_metadata.yaml.j2', 'deployment.yaml.j2')._get_default_module(context)
    l_0_metadata = getattr(included_template, 'metadata', missing)
    if l_0_metadata is missing:
        l_0_metadata = undefined(f"the template {included_template.__name__!r} (imported on line 1 in 'deployment.yaml.j2') does not export the requested name 'metadata'", name='metadata')
    context.vars['metadata'] = l_0_metadata
    context.exported_vars.discard('metadata')
    yield '\napiVersion: apps/v1\nkind: Deployment\n'
    yield str(context.call((undefined(name='metadata') if l_0_metadata is missing else l_0_metadata), (undefined(name='v') if l_0_v is missing else l_0_v)))
    yield '\nspec:\n  replicas: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'replicas')))
    yield '\n  selector:\n    matchLabels: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'selector')))
    yield '\n  minReadySeconds: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'min_ready_seconds')))
    yield '\n  strategy:\n    type: RollingUpdate\n    rollingUpdate: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'rolling_update')))
    yield '\n  template:\n    metadata:\n      labels: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'pod_labels')))
    yield '\n      annotations: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'pod_annotations')))
    yield '\n    spec:\n      serviceAccountName: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'service_account')))
    yield '\n      terminationGracePeriodSeconds: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'termination_grace_period')))
    if environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'image_pull_secrets'):
        pass
        yield '\n      imagePullSecrets: '
        yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'image_pull_secrets')))
    yield '\n      topologySpreadConstraints:\n      - maxSkew: 1\n        topologyKey: kubernetes.io/hostname\n        whenUnsatisfiable: ScheduleAnyway\n        labelSelector:\n          matchLabels: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'selector')))
    yield '\n      containers:\n      - name: '
    yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'container'), 'name')))
    yield '\n        image: '
    yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'container'), 'image')))
    yield '\n        imagePullPolicy: IfNotPresent'
    if t_2(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'container'), 'command')):
        pass
        yield '\n        command: '
        yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'container'), 'command')))
    yield '\n        args: '
    yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'container'), 'args')))
    yield '\n        env: '
    yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'container'), 'env')))
    yield '\n        ports:\n        - name: grpc\n          containerPort: '
    yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'ports'), 'grpc')))
    yield '\n          protocol: TCP\n        - name: grpc-health\n          containerPort: '
    yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'ports'), 'health')))
    yield '\n          protocol: TCP\n        - name: metrics\n          containerPort: '
    yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'ports'), 'metrics')))
    yield '\n          protocol: TCP\n        livenessProbe:\n          grpc:\n            port: '
    yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'ports'), 'health')))
    yield '\n            service: '
    yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'probe_services'), 'liveness')))
    yield '\n          initialDelaySeconds: 5\n          periodSeconds: 10\n        readinessProbe:\n          grpc:\n            port: '
    yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'ports'), 'health')))
    yield '\n            service: '
    yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'probe_services'), 'readiness')))
    yield '\n          periodSeconds: 2'
    if environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'container'), 'resources'):
        pass
        yield '\n        resources: '
        yield str(t_1(environment.getattr(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'container'), 'resources')))
    yield '\n        volumeMounts:\n        - name: config\n          mountPath: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'config_dir')))
    yield '\n          readOnly: true\n      volumes:\n      - name: config\n        configMap:\n          name: '
    yield str(t_1(environment.getattr((undefined(name='v') if l_0_v is missing else l_0_v), 'config_map')))
    yield '\n'

blocks = {}
debug_info = '1=25&4=32&6=34&8=36&9=38&12=40&15=42&16=44&18=46&19=48&20=49&21=52&28=54&30=56&31=58&33=60&34=63&36=65&37=67&40=69&43=71&46=73&50=75&51=77&56=79&57=81&59=83&60=86&64=88&69=90'
