"""Flink SQL's CREATE TABLE, read into what the Table bridge needs: the table's name, a
:class:`Schema` of its columns (types in Flink's syntax, computed columns, watermark,
primary key) and its ``WITH`` options. A statement it cannot read fails naming the part."""
import re
from dataclasses import dataclass, field
from typing import Dict, List

from .schema import MetadataColumn, PhysicalColumn, Schema
from .sql_types import parse_data_type, unquoted

__all__ = ['TableDefinition', 'parse_create_table']

_CREATE = re.compile(r'\s*CREATE\s+(?:TEMPORARY\s+)?TABLE\s+(IF\s+NOT\s+EXISTS\s+)?'
                     r'((?:`[^`]+`|[\w$]+)(?:\.(?:`[^`]+`|[\w$]+))*)\s*\(', re.I)
_OPTION = re.compile(r"\s*'((?:[^']|'')*)'\s*=\s*'((?:[^']|'')*)'\s*(,|$)")
_IDENTIFIER = r'`(?:[^`]|``)+`|[A-Za-z_$][\w$]*'


@dataclass
class TableDefinition:
    """A CREATE TABLE statement: name, declared columns and connector options."""
    name: str
    schema: Schema
    options: Dict[str, str]
    if_not_exists: bool
    partition_keys: List[str] = field(default_factory=list)  # PARTITIONED BY (...)

    def physical_columns(self) -> List[tuple]:
        """(name, DataType) of the columns a connector reads or writes."""
        return [(c.name, c.data_type) for c in self.schema._columns
                if isinstance(c, PhysicalColumn)]

    def persisted_columns(self) -> List[tuple]:
        """(name, DataType) of the columns an insert writes: the physical ones and the
        metadata columns that are not VIRTUAL, in the order they are declared."""
        return [(c.name, c.data_type) for c in self.schema._columns
                if isinstance(c, PhysicalColumn) or
                isinstance(c, MetadataColumn) and not c.is_virtual]

    def metadata_columns(self) -> List[MetadataColumn]:
        """The columns of ``METADATA [FROM 'key'] [VIRTUAL]``."""
        return [c for c in self.schema._columns if isinstance(c, MetadataColumn)]

    def source_schema(self) -> Schema:
        """The Schema of the rows of the table's source, whose metadata columns hold their
        values as the physical ones do (in the order the columns are declared)."""
        schema = self.schema
        return Schema([PhysicalColumn(c.name, c.data_type, c.type_text)
                       if isinstance(c, MetadataColumn) else c for c in schema._columns],
                      list(schema._watermark_specs), schema._primary_key)


def parse_create_table(stmt: str) -> TableDefinition:
    """The definition of a ``CREATE TABLE name (...) WITH (...)`` statement."""
    header = _CREATE.match(stmt)
    if header is None:
        raise ValueError(f"cannot read {_head(stmt)} as CREATE TABLE name (columns) WITH "
                         "(options)")
    close = _closing(stmt, header.end() - 1)
    builder = Schema.new_builder()
    items = _split(stmt[header.end():close])
    names = [unquoted(m.group(0)) for m in (re.match(_IDENTIFIER, i) for i in items) if m]
    for item in items:
        _declare(builder, item, names)
    rest = stmt[close + 1:].strip()
    rest = re.sub(r"^COMMENT\s+'(?:[^']|'')*'\s*", '', rest, flags=re.I)
    partition_keys = []
    partitioned = re.match(r'PARTITIONED\s+BY\s*\(', rest, re.I)
    if partitioned:
        end = _closing(rest, partitioned.end() - 1)
        partition_keys = [unquoted(k) for k in _split(rest[partitioned.end():end])]
        rest = rest[end + 1:].strip()
    with_clause = re.match(r'WITH\s*\(', rest, re.I)
    if with_clause is None:
        raise ValueError("CREATE TABLE: a table here needs WITH ('connector' = ...)")
    end = _closing(rest, with_clause.end() - 1)
    if rest[end + 1:].strip().rstrip(';').strip():
        raise ValueError(f"CREATE TABLE: cannot read {_head(rest[end + 1:])} after WITH (...)")
    options, text = {}, rest[with_clause.end():end].strip()
    while text:
        option = _OPTION.match(text)
        if option is None:
            raise ValueError(f"CREATE TABLE: cannot read the option {_head(text)}; options "
                             "are 'key' = 'value'")
        options[option.group(1).replace("''", "'")] = option.group(2).replace("''", "'")
        text = text[option.end():].strip()
    return TableDefinition(unquoted(header.group(2).split('.')[-1]), builder.build(), options,
                           header.group(1) is not None, partition_keys)


def _declare(builder: 'Schema.Builder', item: str, names: List[str]) -> None:
    """Adds one item of the column list to ``builder`` (in expressions, ``names`` of
    columns are quoted, as Flink shows them)."""
    watermark = re.fullmatch(r'WATERMARK\s+FOR\s+(%s)\s+AS\s+(.+)' % _IDENTIFIER, item,
                             re.I | re.S)
    if watermark:
        builder.watermark(unquoted(watermark.group(1)),
                          _quoted(watermark.group(2).strip(), names))
        return
    key = re.fullmatch(r'(?:CONSTRAINT\s+(%s)\s+)?PRIMARY\s+KEY\s*\(([^)]*)\)\s*NOT\s+ENFORCED'
                       % _IDENTIFIER, item, re.I)
    if key:
        key_columns = [unquoted(n.strip()) for n in key.group(2).split(',')]
        if key.group(1):
            builder.primary_key_named(unquoted(key.group(1)), *key_columns)
        else:
            builder.primary_key(*key_columns)
        return
    column = re.fullmatch(r'(%s)\s+(.+)' % _IDENTIFIER, item, re.S)
    if column is None:
        raise ValueError(f"CREATE TABLE: cannot read the column {_head(item)}")
    name, definition = unquoted(column.group(1)), column.group(2).strip()
    computed = re.fullmatch(r'AS\s+(.+?)(\s+COMMENT\s+\'(?:[^\']|\'\')*\')?', definition,
                            re.I | re.S)
    if computed:
        builder.column_by_expression(name, _quoted(computed.group(1).strip(), names))
        return
    definition = re.sub(r"\s+COMMENT\s+'(?:[^']|'')*'\s*$", '', definition, flags=re.I)
    inline_key = re.search(r'\s+PRIMARY\s+KEY\s+NOT\s+ENFORCED\s*$', definition, re.I)
    if inline_key:
        definition = definition[:inline_key.start()]
    metadata = re.search(r"\s+METADATA(?:\s+FROM\s+'((?:[^']|'')*)')?(\s+VIRTUAL)?\s*$",
                         definition, re.I)
    if metadata:
        builder.column_by_metadata(name, parse_data_type(definition[:metadata.start()]),
                                   metadata.group(1), metadata.group(2) is not None)
    else:
        builder.column(name, parse_data_type(definition))
    if inline_key:
        builder.primary_key(name)


# --- text ---------------------------------------------------------------------------------
def _closing(text: str, opening: int) -> int:
    """The index of the parenthesis closing the one at ``opening``."""
    depth, quote = 0, None
    for index in range(opening, len(text)):
        char = text[index]
        if quote:
            quote = None if char == quote else quote
        elif char in "'`":
            quote = char
        elif char == '(':
            depth += 1
        elif char == ')':
            depth -= 1
            if depth == 0:
                return index
    raise ValueError(f"{_head(text[opening:])}: a parenthesis is not closed")


def _split(text: str) -> List[str]:
    """``text`` cut at the commas outside parentheses, angle brackets and quotes."""
    items, depth, quote, start = [], 0, None, 0
    for index, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'`":
            quote = char
        elif char in '(<':
            depth += 1
        elif char in ')>' and depth:
            depth -= 1
        elif char == ',' and depth == 0:
            items.append(text[start:index].strip())
            start = index + 1
    items.append(text[start:].strip())
    return [i for i in items if i]


def _quoted(expression: str, names: List[str]) -> str:
    """``expression`` with each column name in it quoted, as Flink shows it: ``ts -
    INTERVAL '1' SECOND`` of a table with a column ts shows as `ts` - INTERVAL '1' SECOND."""
    return re.sub(r"'(?:[^']|'')*'|`(?:[^`]|``)+`|[A-Za-z_$][\w$]*",
                  lambda m: '`%s`' % m.group(0) if m.group(0) in names else m.group(0),
                  expression)


def _head(text: str) -> str:
    text = ' '.join(text.split())
    return repr(text if len(text) <= 60 else text[:57] + '...')
