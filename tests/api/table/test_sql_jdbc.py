"""The jdbc SQL connector against a real PostgreSQL (tests/postgres_server.py): a table
read as a bounded scan, written with INSERT INTO (appends) and as upserts on its primary
key from a streaming GROUP BY's changelog, whose -D rows delete their key's row."""
import pytest

from api.common import Types

from tests.api.table.streams import streaming_t_env
from tests.conftest import make_env
from tests.postgres_server import PASSWORD, USER


def _with(db, table, *options):
    return ("WITH ('connector' = 'jdbc', 'url' = '%s', 'table-name' = '%s', "
            "'driver' = 'org.postgresql.Driver', 'username' = '%s', 'password' = '%s'%s)"
            % (db.url, table, USER, PASSWORD, ''.join(", '%s' = '%s'" % o for o in options)))


def test_jdbc_tables_are_scanned_appended_to_and_upserted(spark, postgres_db):
    postgres_db.execute("CREATE TABLE orders (id INTEGER, customer TEXT, amount INTEGER)")
    postgres_db.execute("INSERT INTO orders VALUES (1, 'ann', 10), (2, 'bob', 5), "
                        "(3, 'ann', 7), (4, 'cid', 1)")
    postgres_db.execute("CREATE TABLE copies (id INTEGER, customer TEXT, amount INTEGER)")
    postgres_db.execute("CREATE TABLE totals (customer TEXT PRIMARY KEY, total BIGINT, "
                        "n BIGINT)")
    postgres_db.execute("INSERT INTO totals VALUES ('old', 1, 1), ('ann', 0, 0)")
    t_env = streaming_t_env()
    t_env.execute_sql("CREATE TABLE orders (id INT, customer STRING, amount INT) "
                      + _with(postgres_db, 'orders'))
    t_env.execute_sql("CREATE TABLE copies (id INT, customer STRING, amount INT) "
                      + _with(postgres_db, 'copies', ('sink.buffer-flush.max-rows', '2')))
    t_env.execute_sql("CREATE TABLE totals (customer STRING, total INT, n BIGINT, "
                      "PRIMARY KEY (customer) NOT ENFORCED) " + _with(postgres_db, 'totals'))
    with t_env.execute_sql("SELECT * FROM orders").collect() as rows:
        assert sorted(tuple(r) for r in rows) == [(1, 'ann', 10), (2, 'bob', 5),
                                                  (3, 'ann', 7), (4, 'cid', 1)]
    t_env.execute_sql("INSERT INTO copies SELECT * FROM orders").wait()
    assert postgres_db.rows("copies") == postgres_db.rows("orders")
    t_env.execute_sql("INSERT INTO totals SELECT customer, SUM(amount), COUNT(*) FROM orders "
                      "GROUP BY customer").wait()
    assert postgres_db.rows("totals") == [('ann', 17, 2), ('bob', 5, 1), ('cid', 1, 1),
                                          ('old', 1, 1)]


@pytest.mark.parametrize("micro_batch_size", [1, 100_000])
def test_deleted_rows_of_a_changelog_are_deleted_from_a_jdbc_table(spark, postgres_db,
                                                                   micro_batch_size):
    postgres_db.execute("CREATE TABLE histogram (n BIGINT PRIMARY KEY, words BIGINT)")
    postgres_db.execute("INSERT INTO histogram VALUES (7, 70), (1, 10)")
    env = make_env("local", parallelism=2, micro_batch_size=micro_batch_size)
    t_env = streaming_t_env(env)
    words = "a b a c a b c d d".split()
    t_env.create_temporary_view("words", env.from_collection(
        [(w,) for w in words], Types.ROW_NAMED(['word'], [Types.STRING()])))
    t_env.create_temporary_view("counts", t_env.sql_query(
        "SELECT word, COUNT(*) AS n FROM words GROUP BY word"))
    t_env.execute_sql("CREATE TABLE histogram (n BIGINT, words BIGINT, PRIMARY KEY (n) NOT "
                      "ENFORCED) " + _with(postgres_db, 'histogram'))
    t_env.execute_sql("INSERT INTO histogram SELECT n, COUNT(*) FROM counts GROUP BY n").wait()
    # the group n = 1 is deleted when d is counted twice (its row written before is too)
    assert postgres_db.rows("histogram") == [(2, 3), (3, 1), (7, 70)]
    t_env.execute_sql("INSERT INTO histogram SELECT n, COUNT(*) FROM counts GROUP BY n").wait()
    assert postgres_db.rows("histogram") == [(2, 3), (3, 1), (7, 70)]  # again: the same


def test_an_updating_insert_into_a_jdbc_table_without_primary_key_fails_when_planned(spark):
    env = make_env("local")
    t_env = streaming_t_env(env)
    t_env.create_temporary_view("words", env.from_collection(
        [("a",)], Types.ROW_NAMED(['word'], [Types.STRING()])))
    t_env.execute_sql("CREATE TABLE counts (word STRING, n BIGINT) WITH ('connector' = "
                      "'jdbc', 'url' = 'jdbc:postgresql://localhost/db', 'table-name' = 'c')")
    with pytest.raises(ValueError, match="jdbc table 'counts': please declare primary key"):
        t_env.execute_sql("INSERT INTO counts SELECT word, COUNT(*) FROM words GROUP BY word")


def test_jdbc_options_fail_when_the_table_is_created(spark):
    t_env = streaming_t_env()
    with pytest.raises(ValueError, match="Missing required options are: table-name"):
        t_env.execute_sql("CREATE TABLE t (a INT) WITH ('connector' = 'jdbc', "
                          "'url' = 'jdbc:postgresql://localhost/db')")
    with pytest.raises(ValueError, match="Unsupported options: scan.nope"):
        t_env.execute_sql("CREATE TABLE t (a INT) WITH ('connector' = 'jdbc', "
                          "'url' = 'jdbc:postgresql://localhost/db', 'table-name' = 't', "
                          "'scan.nope' = '1')")
