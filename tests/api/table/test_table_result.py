"""TableResult.print(): Flink's tableau, cell by cell (widths by type, wide characters,
cut values, NULLs, row kinds), as PyFlink 2.3.0 printed these values; whole boxes are
compared with PyFlink's in test_table_api.py."""
import datetime

from api.common.types import Row
from api.table import DataTypes
from api.table.table_result import TableResult, insert_rows, tableau, value_string


def test_a_column_is_as_wide_as_its_type_needs_and_long_values_are_cut():
    columns = [('n', DataTypes.SMALLINT()), ('word', DataTypes.STRING()),
               ('flag', DataTypes.BOOLEAN())]
    rows = insert_rows([(1, '文字' * 20, None)])
    assert tableau(columns, rows, row_kinds=False) == (
        "+--------+--------------------------------+--------+\n"
        "|      n |                           word |   flag |\n"
        "+--------+--------------------------------+--------+\n"
        "|      1 |  文字文字文字文字文字文字文... | <NULL> |\n"
        "+--------+--------------------------------+--------+\n"
        "1 row in set\n")
    assert tableau(columns, [], row_kinds=True) == 'Empty set\n'


def test_values_print_as_flink_casts_them_to_strings():
    assert value_string(1e20, DataTypes.DOUBLE()) == '1.0E20'
    assert value_string(0.10000000149011612, DataTypes.FLOAT()) == '0.1'  # a float32
    assert value_string(datetime.datetime(2024, 1, 2, 3, 4, 5, 120000),
                        DataTypes.TIMESTAMP(9)) == '2024-01-02 03:04:05.120000000'
    assert value_string(datetime.datetime(2024, 1, 2), DataTypes.TIMESTAMP(0)) == \
        '2024-01-02 00:00:00'
    assert value_string([1, None], DataTypes.ARRAY(DataTypes.INT())) == '[1, NULL]'
    assert value_string({'a': True}, DataTypes.MAP(DataTypes.STRING(),
                                                   DataTypes.BOOLEAN())) == '{a=TRUE}'
    assert value_string(Row(1, 'x'), DataTypes.ROW([
        DataTypes.FIELD('a', DataTypes.INT()), DataTypes.FIELD('b', DataTypes.STRING())])) \
        == '(1, x)'
    assert value_string(b'\x01\xff', DataTypes.BYTES()) == "x'01ff'"


def test_collected_rows_are_positional_inserts(capsys):
    result = TableResult([('a', DataTypes.INT())], insert_rows([(1,), (2,)]), streaming=True)
    with result.collect() as rows:
        assert [(repr(r), str(r.get_row_kind())) for r in rows] == [
            ('<Row(1)>', '+I'), ('<Row(2)>', '+I')]
    result.print()
    assert capsys.readouterr().out.splitlines()[1] == '| op |           a |'
