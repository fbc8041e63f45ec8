export default function StudioPage({ deploymentId }: { deploymentId: string | null }) {
  return <main>Studio {deploymentId}</main>;
}
