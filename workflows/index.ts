/** Every workflow the worker registers. */
export { deploymentWorkflow } from './deploymentWorkflow';
export { revisionWorkflow } from './revisionWorkflow';
