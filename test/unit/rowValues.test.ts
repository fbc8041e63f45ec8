import { DEPLOYMENT_COLUMNS, deploymentFromValues, toDeployment } from '../../src/db/repositories/deployments';
import { REVISION_COLUMNS, revisionFromValues, toRevision } from '../../src/db/repositories/revisions';

// Each column's value is its own name: a record read by position equals the one read by name only if the positions
// the *FromValues functions use are those of the column lists the statements select.
const byName = (columns: string[]) => Object.fromEntries(columns.map((column) => [column, column]));

describe('records read from prepared statements by position', () => {
  it('a revision read by position has every field of the one read by column name', () => {
    expect(revisionFromValues(REVISION_COLUMNS)).toEqual(toRevision(byName(REVISION_COLUMNS)));
  });

  it('a revision after a join reads from its offset', () => {
    expect(revisionFromValues(['other', 'columns', ...REVISION_COLUMNS], 2)).toEqual(toRevision(byName(REVISION_COLUMNS)));
  });

  it('a deployment read by position has every field of the one read by column name', () => {
    expect(deploymentFromValues(DEPLOYMENT_COLUMNS)).toEqual(toDeployment(byName(DEPLOYMENT_COLUMNS)));
  });
});
