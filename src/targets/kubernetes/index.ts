/**
 * The Kubernetes target (issue 21): revisions as objects on a cluster, shaped by resource_spec. The composition root
 * opens it with `KubernetesTarget.open({config, db, secretBox, settings: loadKubeSettings(process.env, config.databaseUrl)})`;
 * the image builder pushes each revision's image with `SkopeoImagePusher` first, so the revision records a digest.
 */
export { KubernetesTarget, type KubernetesTargetOptions } from './kubernetesTarget';
export { loadKubeSettings, type KubeSettings } from './settings';
export { KubeApi, KubeApiError } from './kubeApi';
