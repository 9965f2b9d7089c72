// A table's header row: one column header per name; a column whose header only a screen reader
// needs (a row's buttons) is given as { hidden }.
export function TableHead({ columns }: { columns: (string | { hidden: string })[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th scope="col" key={typeof c === 'string' ? c : c.hidden}>
            {typeof c === 'string' ? c : <span class="visually-hidden">{c.hidden}</span>}
          </th>
        ))}
      </tr>
    </thead>
  );
}
