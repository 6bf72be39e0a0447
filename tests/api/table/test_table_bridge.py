"""The Table bridge (pyflink.table's StreamTableEnvironment) over Spark SQL.

The PyFlink oracle is not installed here: expected values come from the reference
documents (the DataStream intro guide's "Conversion between DataStream and Table"),
FIDELITY.md (row printing) and Flink's source for what the documents leave open (the
column types Flink derives from type information: TypeInfoDataTypeConverter; legacy,
nullable types when fields are named). Query results are checked against the same
computation done in Python. Streams run on the in-process executor; SQL on the shared
Spark session (few Spark jobs: schemas and build-time errors need none)."""
import datetime
from collections import defaultdict
from decimal import Decimal

import pytest

from api.common import Row, Types, WatermarkStrategy
from api.datastream.connectors.datagen import DataGeneratorSource
from api.table import DataTypes, EnvironmentSettings, StreamTableEnvironment, TableEnvironment
from api.table.expressions import col
from tests.conftest import make_env

ORDERS = [(1, 'apple', 3), (2, 'pear', 4), (1, 'plum', 5), (3, 'fig', 1), (2, 'kiwi', 7)]
ORDER_TYPE = Types.TUPLE([Types.INT(), Types.STRING(), Types.INT()])


def _t_env(batch: bool = False):
    env = make_env("local")
    settings = EnvironmentSettings.in_batch_mode() if batch else None
    return env, StreamTableEnvironment.create(env, environment_settings=settings)


def _orders(env):
    return env.from_collection(ORDERS, type_info=ORDER_TYPE)


def _schema_text(capsys, table) -> str:
    table.print_schema()
    return capsys.readouterr().out


# --- schemas: no job runs -------------------------------------------------------------------
def test_columns_follow_the_stream_type_as_flink_derives_them(capsys):
    env, t_env = _t_env()
    # a TUPLE is flattened into f0, f1, ...; Java's Integer of a tuple is INT NOT NULL
    assert _schema_text(capsys, t_env.from_data_stream(_orders(env))) == (
        "(\n  `f0` INT NOT NULL,\n  `f1` STRING,\n  `f2` INT NOT NULL\n)\n")
    # a ROW's fields keep their names and are all nullable
    rows = env.from_collection([Row(name='a', score=1.5)], type_info=Types.ROW_NAMED(
        ['name', 'score'], [Types.STRING(), Types.DOUBLE()]))
    assert _schema_text(capsys, t_env.from_data_stream(rows)) == (
        "(\n  `name` STRING,\n  `score` DOUBLE\n)\n")
    # an atomic type is one column f0
    longs = env.from_collection([1, 2], type_info=Types.LONG())
    assert _schema_text(capsys, t_env.from_data_stream(longs)) == "(\n  `f0` BIGINT NOT NULL\n)\n"
    nested = env.from_collection([(Decimal('1.5'), [1], {'k': 2.0})], type_info=Types.TUPLE(
        [Types.BIG_DEC(), Types.LIST(Types.INT()), Types.MAP(Types.STRING(), Types.DOUBLE())]))
    assert t_env.from_data_stream(nested).get_schema().get_field_data_types() == [
        DataTypes.DECIMAL(38, 18), DataTypes.ARRAY(DataTypes.INT(False), False),
        DataTypes.MAP(DataTypes.STRING(), DataTypes.DOUBLE(), False)]


def test_field_names_rename_by_position_or_select_by_name(capsys):
    env, t_env = _t_env()
    # the intro guide's from_data_stream(ds, 'a, b, c'); named fields take legacy types
    table = t_env.from_data_stream(_orders(env), 'a, b, c')
    assert str(table.get_schema()) == "root\n |-- a: INT\n |-- b: STRING\n |-- c: INT\n"
    table = t_env.from_data_stream(_orders(env), 'f2 as amount, f1')
    assert table.get_schema().get_field_names() == ['amount', 'f1']
    with pytest.raises(ValueError, match="neither name fields of the stream"):
        t_env.from_data_stream(_orders(env), 'a, b')
    with pytest.raises(ValueError, match="Time attributes"):
        t_env.from_data_stream(_orders(env), 'a, b, t.rowtime')


# --- build-time errors ----------------------------------------------------------------------
def test_an_unbounded_stream_is_a_table_only_for_streaming_aggregates_and_untyped_none():
    env, t_env = _t_env()
    unbounded = env.from_source(DataGeneratorSource(lambda i: i, count=None,
                                                    type_info=Types.LONG()),
                                WatermarkStrategy.no_watermarks(), "gen")
    table = t_env.from_data_stream(unbounded.map(lambda x: x, Types.LONG()))
    with pytest.raises(ValueError, match=r"unbounded source.*Source: gen.*Bound the source"):
        table.select(col('f0').sqrt).execute()  # no evaluation on the stream: Spark SQL
    untyped = env.from_collection([(1, 'a')])
    with pytest.raises(ValueError, match="no declared type: give the operator"):
        t_env.from_data_stream(untyped)
    times = env.from_collection([datetime.time(1)], type_info=Types.SQL_TIME())
    with pytest.raises(ValueError, match="no TIME type"):
        t_env.from_data_stream(times)


def test_unavailable_sql_fails_naming_what_is_missing():
    env, t_env = _t_env()
    ddl = """
        CREATE TABLE my_source (
          a INT,
          b VARCHAR
        ) WITH (
          'connector' = 'filesystem',
          'path' = '/tmp/x'
        )
    """
    with pytest.raises(ValueError, match=r"required options are missing for 'filesystem'.*"
                                         r"Missing required options are: format"):
        t_env.execute_sql(ddl)
    with pytest.raises(NotImplementedError, match=r"CREATE VIEW.*cannot run here"):
        t_env.execute_sql("CREATE VIEW v AS SELECT 1")
    table = t_env.from_data_stream(_orders(env))
    with pytest.raises(ValueError, match="Table 'my_sink' was not found"):
        table.execute_insert("my_sink")
    with pytest.raises(ValueError, match="is not a query"):
        t_env.sql_query("SHOW TABLES")
    with pytest.raises(NotImplementedError, match=r"Table.map\(\) is not available.*sql_query"):
        table.map


def test_views_are_checked_when_registered():
    env, t_env = _t_env()
    t_env.create_temporary_view("orders", _orders(env), "a, b, c")
    with pytest.raises(ValueError, match="Temporary table 'orders' already exists"):
        t_env.create_temporary_view("orders", _orders(env))
    with pytest.raises(ValueError, match="without catalog or database"):
        t_env.create_temporary_view("cat.db.orders2", _orders(env))
    assert t_env.list_temporary_views() == ["orders"]
    assert t_env.from_path("orders").get_schema().get_field_names() == ['a', 'b', 'c']
    with pytest.raises(ValueError, match="was not found"):
        t_env.from_path("missing")
    with pytest.raises(ValueError, match="needs the param 'stream_execution_environment'"):
        StreamTableEnvironment.create(environment_settings=EnvironmentSettings.in_batch_mode())


# --- queries (Spark) ------------------------------------------------------------------------
def test_conversions_of_the_intro_guide(spark, capfd):
    env, t_env = _t_env()
    table = t_env.from_data_stream(_orders(env), 'a, b, c')
    row_type = Types.ROW([Types.INT(), Types.STRING(), Types.INT()])
    t_env.to_append_stream(table, row_type).print()
    t_env.to_retract_stream(table, row_type).print()
    env.execute()
    lines = capfd.readouterr().out.splitlines()
    # a ROW stream prints +I[...] without spaces; a (Boolean, Row) tuple Java-style
    assert lines == ['+I[%d,%s,%d]' % o for o in ORDERS] + \
        ['(true,+I[%d, %s, %d])' % o for o in ORDERS]


def test_a_query_over_views_becomes_a_stream_of_rows(spark):
    env, t_env = _t_env(batch=True)  # (in STREAMING mode, GROUP BY results are changelogs)
    t_env.create_temporary_view("orders", _orders(env), "customer, item, amount")
    totals = t_env.sql_query("SELECT customer, SUM(amount) AS total, COUNT(*) AS n "
                             "FROM orders WHERE amount > 1 GROUP BY customer")
    assert [str(t) for t in totals.get_schema().get_field_data_types()] == [
        'INT', 'BIGINT', 'BIGINT NOT NULL']
    expected = defaultdict(lambda: [0, 0])
    for customer, _, amount in ORDERS:
        if amount > 1:
            expected[customer][0] += amount
            expected[customer][1] += 1
    with t_env.to_data_stream(totals).execute_and_collect() as results:
        rows = list(results)
    assert sorted(rows, key=lambda r: r.customer) == [
        Row(customer=c, total=t, n=n) for c, (t, n) in sorted(expected.items())]
    assert all(r.get_row_kind().value == 0 for r in rows)  # INSERT
    # a Table in SQL through str(), and execute_sql's result
    big = t_env.sql_query(f"SELECT item FROM {totals} JOIN orders USING (customer) "
                          "WHERE total > 5 ORDER BY item")
    with t_env.execute_sql(f"SELECT item FROM {big}").collect() as result:
        # (collected rows are positional, as PyFlink's: r.item raises AttributeError)
        assert [r[0] for r in result] == sorted(
            o[1] for o in ORDERS if expected[o[0]][0] > 5)


def test_only_the_views_a_query_names_run_their_stream(spark):
    env, t_env = _t_env(batch=True)

    def broken(x):
        raise RuntimeError("this stream must not run")
    t_env.create_temporary_view("broken", env.from_collection([1], Types.INT())
                                .map(broken, Types.INT()))
    t_env.create_temporary_view("numbers", env.from_collection([1, 2, 3], Types.INT()))
    with t_env.execute_sql("SELECT SUM(f0) AS s FROM numbers").collect() as result:
        assert [r[0] for r in result] == [6]


def test_values_of_every_column_type_survive_the_round_trip(spark):
    env, t_env = _t_env()
    record_type = Types.ROW_NAMED(
        ['b', 'i', 'l', 'd', 's', 'dec', 'day', 'ts', 'bytes', 'xs', 'm', 'inner'],
        [Types.BOOLEAN(), Types.INT(), Types.LONG(), Types.DOUBLE(), Types.STRING(),
         Types.BIG_DEC(), Types.SQL_DATE(), Types.SQL_TIMESTAMP(),
         Types.PRIMITIVE_ARRAY(Types.BYTE()), Types.BASIC_ARRAY(Types.INT()),
         Types.MAP(Types.STRING(), Types.LONG()),
         Types.ROW_NAMED(['x', 'y'], [Types.INT(), Types.STRING()])])
    records = [
        Row(True, 7, 2 ** 40, 0.25, 'héllo', Decimal('12.500000000000000000'),
            datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 23, 59, 1, 250000),
            b'\x00\xff', [1, None, 3], {'a': 1}, Row(x=1, y='in')),
        Row(False, -1, None, None, None, None, None, None, None, None, None, None)]
    table = t_env.from_data_stream(env.from_collection(records, type_info=record_type))
    t_env.create_temporary_view("everything", table)
    result = t_env.sql_query("SELECT * FROM everything")
    with t_env.to_data_stream(result).execute_and_collect() as results:
        rows = list(results)
    assert [list(r) for r in rows] == [list(r) for r in records]
    assert rows[0].inner == Row(x=1, y='in')


def test_a_table_environment_without_a_stream_runs_sql(spark):
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    table = t_env.sql_query("SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(id, name)")
    with table.execute().collect() as result:
        assert [tuple(r) for r in result] == [(1, 'a'), (2, 'b')]
