/** The shell: sign-in gate, header, and the page of the current route. */
import { lazy, Suspense, useSyncExternalStore, type ReactElement } from 'react';
import { DeploymentCreate } from './pages/DeploymentCreate';
import { DeploymentPage } from './pages/DeploymentPage';
import { DeploymentsList } from './pages/DeploymentsList';
import { RevisionPage } from './pages/RevisionPage';
import { SignIn } from './pages/SignIn';
import { Link, useRoute } from './router';
import { apiKey, onSessionChange, signOut } from './session';
import { MODE } from './settings';

// The studio (graph layout, run views, the SDK client) loads when a studio is opened, not with the console.
const StudioPage = lazy(() => import('./studio/StudioPage'));

const UUID = '[0-9a-f-]{36}';
const ROUTES: Array<[RegExp, (match: RegExpExecArray) => ReactElement]> = [
  [/^\/$/, () => <DeploymentsList />],
  [/^\/deployments$/, () => <DeploymentsList />],
  [/^\/deployments\/new$/, () => <DeploymentCreate />],
  [new RegExp(`^/deployments/(${UUID})$`), (match) => <DeploymentPage key={match[1]} deploymentId={match[1]!} />],
  [
    new RegExp(`^/deployments/(${UUID})/revisions/(${UUID})$`),
    (match) => <RevisionPage key={match[2]} deploymentId={match[1]!} revisionId={match[2]!} />,
  ],
  [new RegExp(`^/deployments/(${UUID})/studio(/.*)?$`), (match) => <StudioPage key={match[1]} deploymentId={match[1]!} />],
];

function Page({ route }: { route: string }) {
  for (const [pattern, render] of ROUTES) {
    const match = pattern.exec(route);
    if (match) return render(match);
  }
  return (
    <main>
      <h1>Not found</h1>
      <p>
        Nothing here. <Link to="/deployments">Deployments</Link>
      </p>
    </main>
  );
}

function useSignedIn(): boolean {
  return useSyncExternalStore(onSessionChange, () => apiKey() !== null);
}

export function App() {
  const route = useRoute();
  const signedIn = useSignedIn();
  if (MODE === 'studio') {
    return (
      <Suspense fallback={<p aria-busy="true">Loading the studio…</p>}>
        <StudioPage deploymentId={null} />
      </Suspense>
    );
  }
  if (!signedIn) return <SignIn />;
  return (
    <>
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="top">
        <Link to="/deployments" className="brand">
          graphx console
        </Link>
        <nav aria-label="Main">
          <Link to="/deployments">Deployments</Link>
        </nav>
        <button type="button" className="small" onClick={signOut}>
          Sign out
        </button>
      </header>
      <div id="content" tabIndex={-1}>
        <Suspense fallback={<p aria-busy="true">Loading…</p>}>
          <Page route={route} />
        </Suspense>
      </div>
    </>
  );
}
