package main

// The harness's two configurations: ADK Go's defaults (adk-go), and adk-go+database, ADK's
// documented durable session store (session/database, gorm) for the agents whose tools need
// confirmation, as the Python binding keeps their sessions in ADK's SqliteSessionService
// (conformance/bindings/google_adk.py). Its SQLite database is opened in memory, on one connection
// that the whole run keeps: every event is stored as rows and every run reads its session back
// from them, so a pause is answered from its serialised form, and nothing is left on disk when
// the suite stops the harness.

import (
	"database/sql"
	"maps"

	"github.com/glebarez/sqlite"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"react-conformance/protocol"
)

const (
	gormModule   = "gorm.io/gorm"
	sqliteModule = "github.com/glebarez/sqlite"
)

// variant is what the welcome says of a configuration.
type variant struct {
	name                      string
	claimed                   []any
	notClaimed, knownFailures object
	modules                   []string
}

func (v variant) dependencies() object {
	found := object{}
	for _, module := range v.modules {
		found[module] = protocol.ModuleVersion(module)
	}
	return found
}

var defaults = variant{name: "adk-go", claimed: claimed, notClaimed: notClaimed, knownFailures: knownFailures,
	modules: []string{library, genaiGo}}

// withDatabase is adk-go+database: durable-approvals claimed; a pause's events read back from the
// store are no longer the caller's (TRJ-2); a replayed answer still runs its call again (HITL-8).
var withDatabase = func() variant {
	unclaimed := maps.Clone(notClaimed)
	delete(unclaimed, "durable-approvals")
	known := maps.Clone(knownFailures)
	delete(known, "A pause's trajectory is a snapshot")
	known["Replaying the answer to a serialised pause whose call already ran never runs it again"] = replay
	return variant{name: "adk-go+database", claimed: append(append([]any{}, claimed...), "durable-approvals"),
		notClaimed: unclaimed, knownFailures: known, modules: []string{library, genaiGo, gormModule, sqliteModule}}
}()

// databaseStore is ADK's database session store over a SQLite database in memory, its tables made
// by database.AutoMigrate, gorm's own log silenced.
func databaseStore() (session.Service, error) {
	connection, err := sql.Open(sqlite.DriverName, ":memory:")
	if err != nil {
		return nil, err
	}
	// One connection, kept for the run: an in-memory database lives as long as its connection, and
	// each connection opens a database of its own.
	connection.SetMaxOpenConns(1)
	connection.SetMaxIdleConns(1)
	connection.SetConnMaxLifetime(0)
	store, err := database.NewSessionService(sqlite.Dialector{Conn: connection},
		&gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		return nil, err
	}
	return store, database.AutoMigrate(store)
}
