/**
 * What the two browser redirects do (SPEC §4.2, CONTRACT §3): the OAuth callback, and the code-hosting app's setup
 * URL, which adds `setup_action` and `installation_id` to the same parameters.
 */
import { InputError } from '@graphx/kit/errors';
import type { AuthorizationFlow } from './authorizationFlow';
import type { CallbackQuery } from './schemas';

export interface CallbackOutcome {
  status: 'completed' | 'updated' | 'pending_approval' | 'installed';
  message: string;
  auth_id?: string;
  provider_id?: string;
  integration_id?: string | null;
}

/**
 * The OAuth callback: `error` fails the attempt; `code` and `state` finish it.
 * @throws InputError for a provider error, a missing parameter, or a bad state.
 */
export async function handleOAuthCallback(
  flow: AuthorizationFlow,
  providerId: string,
  query: CallbackQuery,
): Promise<CallbackOutcome> {
  if (query.error) {
    return flow.failFromProvider(providerId, {
      state: query.state,
      error: query.error,
      errorDescription: query.error_description,
    });
  }
  if (!query.code || !query.state) throw new InputError('Both code and state are required to finish the authorization.');
  const finished = await flow.finish(providerId, { code: query.code, state: query.state, installationId: query.installation_id });
  return {
    status: 'completed',
    message: 'Authorization complete. You can close this window.',
    auth_id: finished.authId,
    provider_id: finished.providerId,
    integration_id: finished.integrationId,
  };
}

/**
 * The setup URL: `update` needs no exchange; `request` waits for an owner and stores nothing; `install` (or no action)
 * with `code` and `state` is the OAuth callback; `install` alone is acknowledged, but its `installation_id` is not
 * recorded, because without an exchange nothing proves it is the caller's.
 */
export async function handleSetupCallback(
  flow: AuthorizationFlow,
  providerId: string,
  query: CallbackQuery,
): Promise<CallbackOutcome> {
  if (query.error) return handleOAuthCallback(flow, providerId, query);
  if (query.setup_action === 'update') {
    return { status: 'updated', message: 'The installation was updated. You can close this window.' };
  }
  if (query.setup_action === 'request') {
    return {
      status: 'pending_approval',
      message: 'The installation is waiting for an owner of the account to approve it. Nothing was stored.',
    };
  }
  if (query.code || query.state) return handleOAuthCallback(flow, providerId, query);
  if (query.setup_action === 'install') {
    return {
      status: 'installed',
      message:
        'The app was installed. It becomes an integration once a user authorizes it: start with POST /v2/auth/authenticate.',
    };
  }
  throw new InputError('Nothing to do: expected setup_action, or code and state.');
}
