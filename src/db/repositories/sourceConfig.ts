/** The `source_config` and `source_revision_config` JSON a deployment and its revisions store, as the API names them. */
export interface SourceConfig {
  integration_id?: string | null;
  repo_url?: string | null;
  build_on_push?: boolean | null;
  custom_url?: string | null;
  resource_spec?: Record<string, unknown> | null;
  listener_id?: string | null;
  listener_config?: { k8s_namespace?: string | null } | null;
  install_command?: string | null;
  build_command?: string | null;
}

export interface SourceRevisionConfig {
  repo_ref?: string | null;
  graphx_config_path?: string | null;
  image_uri?: string | null;
  repo_commit_sha?: string | null;
}
